#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeBMP
import NukeCore
import NukePixels
import NukePluginKit

/// Decodes a complete ICO or CUR file: the directory, the entry that best fits the target size,
/// then that entry — a DIB through NukeBMP (its AND mask applied as alpha unless 32-bit pixels
/// carry alpha of their own) or a PNG through the PNG decoder the registry has.
struct ICODecoding {
    let context: ImageDecodingContext
    /// Where PNG entries are decoded: the shared registry (NukePNG when the app links it).
    var pngDecoders: ImageDecoderRegistry = .shared

    func decode(_ data: Data) throws(ImageCodecError) -> ImageContainer {
        let directory = try data.withUnsafeBytes { ICODirectory.read($0) }.get(ICOLibrary.self, part: "directory", byteCount: data.count)
        let type = directory.type
        let entry = directory.best(for: context.targetSize)
        guard let end = checkedSum(entry.offset, entry.size), entry.size > 0 else {
            throw ICOLibrary.error(.corrupt, format: type, "entry \(entry.index) has \(entry.size) bytes at \(entry.offset)")
        }
        guard end <= data.count else {
            throw ICOLibrary.error(.incomplete, format: type,
                                   "entry \(entry.index) needs \(entry.size) bytes at \(entry.offset), the file has \(data.count)")
        }
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .isProgressiveKey: false, .icoEntryCountKey: directory.entries.count, .icoEntryIndexKey: entry.index,
            .icoEntrySizesKey: directory.entries.map { ImageSize(width: $0.width, height: $0.height) },
        ]
        if type == .cur { userInfo[.cursorHotspotKey] = entry.hotspot }
        var image: Image
        if entry.isPNG {
            image = try decodePNG(data[(data.startIndex + entry.offset)..<(data.startIndex + end)], entry: entry, type: type)
        } else {
            let (bitmap, warnings) = try decodeDIB(data, entry: entry, end: end, type: type)
            if let warnings { userInfo[.warningsKey] = warnings }
            image = Image(bitmap: bitmap)
        }
        let bitmap = image.bitmap
        // The entry chosen for the target is the original the core's driver resizes.
        if context.targetSize != nil { userInfo[.originalSizeKey] = ImageSize(width: bitmap.width, height: bitmap.height) }
        return ImageContainer(image: Image(bitmap: bitmap, colorInfo: image.colorInfo), type: type, isPreview: false, userInfo: userInfo)
    }

    private func checkedSum(_ a: Int, _ b: Int) -> Int? {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : sum
    }

    /// A PNG entry, through the registry's PNG decoder (the output stage is left to this decode).
    private func decodePNG(_ bytes: Data, entry: ICODirectory.Entry, type: ImageType) throws(ImageCodecError) -> Image {
        guard pngDecoders.registeredFormats.contains(.png) else {
            throw ICOLibrary.error(.unsupported, format: type,
                                   "entry \(entry.index) is a PNG image and no PNG decoder is registered: link NukePNG")
        }
        var inner = context
        inner.data = Data(bytes)
        inner.type = .png
        inner.isCompleted = true
        inner.prefersPremultipliedAlpha = false
        inner.appliesOrientation = false
        inner.colorConversion = nil
        do {
            return try pngDecoders.decode(inner).image
        } catch let error as ImageCodecError {
            throw ImageCodecError(error.code, stage: error.stage, format: type, codec: error.codec,
                                  message: "entry \(entry.index)'s PNG image: \(error.message)")
        } catch {
            throw ICOLibrary.error(.internalFailure, format: type, "entry \(entry.index)'s PNG image: \(error)")
        }
    }

    /// A DIB entry: NukeBMP's decoder, then the AND mask as alpha.
    private func decodeDIB(_ data: Data, entry: ICODirectory.Entry, end: Int, type: ImageType) throws(ImageCodecError) -> (Bitmap, ImageDecodingWarnings?) {
        let context = self.context
        return try data.withBytes { (bytes) throws(ImageCodecError) in
            let header: BMPHeader
            switch BMPHeader.read(bytes, dibOffset: entry.offset, end: end, fileOffset: nil, halvesHeight: true, alphaInRGB32: true) {
            case .header(let found): header = found
            case .needsMoreData: throw ICOLibrary.error(.incomplete, format: type, "entry \(entry.index)'s bitmap header is cut short")
            case .invalid(let code, let reason): throw ICOLibrary.error(code, format: type, "entry \(entry.index): \(reason)")
            }
            let pixels = try BMPPixelDecoder.decode(header, bytes: bytes, end: end, context: context, format: type, outputBytesPerPixel: 4)
            var warnings = pixels.warnings
            var bitmap = pixels.bitmap
            if bitmap.pixelFormat != .rgba8 || pixels.alphaWasZero || !header.hasAlpha {
                if bitmap.pixelFormat != .rgba8 { bitmap = bitmap.converted(to: .rgba8) }
                if !applyANDMask(header, bytes: bytes, end: end, to: &bitmap) {
                    warnings.append("entry \(entry.index) has no AND mask; it is drawn opaque")
                }
            }
            return (bitmap, warnings.first.map { ImageDecodingWarnings(count: warnings.count, first: $0) })
        }
    }

    /// Makes every pixel whose AND-mask bit is 1 transparent black (as browsers draw it; Windows
    /// inverts the screen under a cursor's non-black masked pixels); `false` when the mask is not there.
    private func applyANDMask(_ header: BMPHeader, bytes: UnsafeRawBufferPointer, end: Int, to bitmap: inout Bitmap) -> Bool {
        guard !header.isRLE else { return true }
        let maskStride = ((header.width + 31) / 32) * 4
        let start = header.pixelOffset + header.stride * header.height   // the pixels fit in `end`: no overflow
        guard let size = Optional(maskStride).flatMap({ s -> Int? in
            let (product, overflow) = s.multipliedReportingOverflow(by: header.height)
            return overflow ? nil : product
        }), start + size <= end else { return false }
        let width = header.width, height = header.height, bytesPerRow = bitmap.bytesPerRow
        bitmap.withUnsafeMutableBytes { out in
            guard let base = out.baseAddress else { return }
            for y in 0..<height {
                let row = start + (header.isTopDown ? y : height - 1 - y) * maskStride
                for x in 0..<width where bytes[row + x >> 3] & (0x80 >> UInt8(x & 7)) != 0 {
                    (base + y * bytesPerRow + 4 * x).storeBytes(of: 0, as: UInt32.self)
                }
            }
        }
        return true
    }
}
