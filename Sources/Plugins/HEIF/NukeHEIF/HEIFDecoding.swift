#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CHEIFShim
import NukeCore
import NukePluginKit
import NukePixels

/// Decodes a complete HEIC or AVIF file.
///
/// libheif 1.15 has no progressive decoding: it needs the whole file (the `mdat` box usually
/// follows the metadata, but nothing can be shown before the coded image is complete). Downloads
/// go through a `WholeInputDecoder`, which decodes at `finish()` (``HEIFPlugin``);
/// no previews, and the codec's capabilities say so.
struct HEIFDecoding {
    /// The decode request: limits, allocator, alpha, bit depth, target size and plan, cancellation.
    let context: ImageDecodingContext

    func decode(_ bytes: Data) throws(ImageCodecError) -> ImageContainer {
        let format = ImageType(bytes) ?? .heif
        // What the file asks libheif to decode (grid tiles, alpha), before libheif reads it.
        let graph = HEIFItemGraph.parse(bytes)
        try graph?.check(limits: context.limits, format: format)
        // libheif checks the coded size (padded to whole CTUs or tiles, up to 64 pixels more than
        // the image shown, and refuses a side equal to its limit): give it that slack. The core's
        // limits then check the size shown, exactly, before any pixel memory.
        let (slack, overflow) = context.limits.maxDimension.addingReportingOverflow(65)
        let handle = try HEIFDecoderHandle(bytes: bytes, format: format, maximumDimension: overflow ? Int.max : slack,
                                           codedItems: graph?.codedItems ?? [])
        let info = handle.info
        let wide = context.prefersHighBitDepth && info.bit_depth > 8
        let hasAlpha = info.has_alpha != 0
        let bytesPerPixel = (hasAlpha ? 4 : 3) * (wide ? 2 : 1)
        let size = ImageSize(width: Int(info.width), height: Int(info.height))
        try context.limits.check(
            width: size.width, height: size.height, bytesPerPixel: bytesPerPixel, format: format, codec: HEIFLibrary.codecName,
            inputByteCount: bytes.count
        )
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [
            .isProgressiveKey: false,
            .heifBitDepthKey: Int(info.bit_depth),
            .heifImageCountKey: Int(info.image_count),
            .heifThumbnailCountKey: Int(info.thumbnail_count),
        ]
        if let brand = Self.majorBrand(bytes) { userInfo[.heifBrandKey] = brand }
        if info.color_profile == Self.fourCC("nclx") {
            userInfo[.heifNCLXKey] = [Int(info.nclx_primaries), Int(info.nclx_transfer), Int(info.nclx_matrix), Int(info.nclx_full_range)]
        }

        // Decode to size: the embedded thumbnail the core chooses (one that covers its plan's
        // native floor), else the full image; the core's resampler finishes.
        var source = (index: -1, size: size)
        if let thumbnail = context.nativeReduction(of: size, among: .embedded, embedded: handle.thumbnailSizes), let index = thumbnail.option {
            source = (index, thumbnail.size)
        }
        let pixelFormat: PixelFormat = wide ? (hasAlpha ? .rgba16 : .rgb16) : (hasAlpha ? .rgba8 : .rgb8)
        let alphaMode: AlphaMode = hasAlpha ? .straight : .none
        var bitmap: Bitmap
        if !hasAlpha, !wide, ImageRowDestination.resamples(size: source.size, originalSize: size, context: context),
           let planar = try handle.decodePlanes(thumbnail: source.index, size: source.size, original: size, context: context) {
            // Decode to size of an 8-bit image without alpha: shrunk from libheif's planar RGB.
            bitmap = planar
        } else {
            // Into the core's destination: the image, or for a decode to size libheif's
            // interleaved rows straight into the resampler; no full-size copy of our own.
            let destination = try ImageRowDestination(size: source.size, pixelFormat: pixelFormat, alphaMode: alphaMode, context: context,
                                                      originalSize: size)
            try handle.decode(thumbnail: source.index, alpha: hasAlpha, wide: wide, into: destination, context: context)
            bitmap = destination.finish().bitmap
        }
        try HEIFLibrary.checkCancellation(context, format: format)
        if source.index >= 0 { userInfo[.heifUsedThumbnailKey] = true }
        // The core's driver finishes the decode to size from the stored size.
        if bitmap.width != size.width || bitmap.height != size.height { userInfo[.originalSizeKey] = size }
        // libheif has applied irot/imir/clap, which govern a HEIF's display (the EXIF orientation
        // is informative). The pixels are upright, so the EXIF block says 1: nobody rotates them a
        // second time, and an encoder writes the block back with Orientation 1.
        var exif = handle.exif(maxSize: context.limits.maxMetadataBytes)
        if let stored = exif, var block = ExifBlock(stored), block.orientation.map({ $0 != .up }) == true {
            block.setOrientation(.up)
            exif = block.data
        }
        var image = Image(bitmap: bitmap, exif: exif)
        image.colorInfo.iccProfile = handle.iccProfile(maxSize: context.limits.maxMetadataBytes)
        return ImageContainer(image: image, type: format, isPreview: false, userInfo: userInfo)
    }

    /// The `ftyp` box's major brand, such as `"heic"`.
    static func majorBrand(_ data: Data) -> String? {
        guard data.count >= 12, data[data.startIndex + 4..<data.startIndex + 8].elementsEqual("ftyp".utf8) else { return nil }
        return String(decoding: data[data.startIndex + 8..<data.startIndex + 12], as: UTF8.self)
    }

    static func fourCC(_ text: String) -> UInt32 {
        text.utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
