#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CHEIFShim
import NukeCore
import NukePluginKit
import NukePixels

/// Owns one libheif context over a complete file, and the file's bytes it reads without copying.
final class HEIFDecoderHandle {
    private let decoder: OpaquePointer
    /// Kept alive as long as libheif reads it (`heif_context_read_from_memory_without_copy`).
    private let bytes: Data
    private let format: ImageType
    private(set) var info = nukeheif_info()

    /// Reads the file's boxes and its primary image's properties.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` with libheif's message: `.incomplete` (the data
    ///   ends early), `.corrupt`, `.unsupported` (libheif 1.15 cannot read it, or libheif is not installed), `.limitExceeded`.
    ///
    /// `codedItems` are the items the file's `meta` box declares as coded images (`hvc1`, `av01`):
    /// decoding one of them lets NukeHEIF's decoder plugin convert its YCbCr to RGB itself.
    init(bytes: Data, format: ImageType, maximumDimension: Int, codedItems: [UInt32] = []) throws(ImageCodecError) {
        try HEIFLibrary.load(format: format)
        guard let decoder = nukeheif_decoder_create() else {
            throw HEIFLibrary.error(.internalFailure, format: format, "libheif could not allocate a context")
        }
        self.decoder = decoder
        self.bytes = bytes
        self.format = format
        var info = nukeheif_info()
        let status = bytes.withUnsafeBytes { raw in
            nukeheif_decoder_open(decoder, raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, Int32(clamping: maximumDimension), &info)
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, "reading the \(format.name) file") }
        self.info = info
        codedItems.withUnsafeBufferPointer { nukeheif_decoder_set_coded_items(decoder, $0.baseAddress, Int32(clamping: $0.count)) }
    }

    deinit { nukeheif_decoder_destroy(decoder) }

    private func failure(_ status: nuke_status, _ context: String) -> ImageCodecError {
        HEIFLibrary.error(status: status, diagnostics: nukeheif_decoder_diagnostics(decoder).pointee, format: format, context: context)
    }

    /// The sizes of the primary image's thumbnails, by index (zero for one libheif cannot size).
    var thumbnailSizes: [ImageSize] {
        (0..<Int(info.thumbnail_count)).map { index in
            var width: Int32 = 0, height: Int32 = 0
            guard nukeheif_decoder_thumbnail_size(decoder, Int32(index), &width, &height) == NUKE_STATUS_OK else { return ImageSize(width: 0, height: 0) }
            return ImageSize(width: Int(width), height: Int(height))
        }
    }

    /// Decodes the primary image (`thumbnail` < 0) or a thumbnail into `destination` (of the
    /// matching pixel format): into its memory when it keeps the image, else a row at a time, so
    /// that only libheif's own image exists at full size.
    ///
    /// The corresponding libheif function is `heif_decode_image`.
    func decode(thumbnail: Int, alpha: Bool, wide: Bool, into destination: ImageRowDestination, context: ImageDecodingContext) throws(ImageCodecError) {
        let size = destination.size
        let stride = size.width * (alpha ? 4 : 3) * (wide ? 2 : 1)
        precondition(stride == destination.bytesPerRow, "the destination takes the decoded layout")
        let row = UnsafeMutableRawBufferPointer.allocate(byteCount: destination.buffer == nil ? stride : 0, alignment: 16)
        defer { row.deallocate() }
        let status = withExtendedLifetime(destination) {
            context.withShimCancellation { cancellation in
                nukeheif_decoder_decode(
                    decoder, Int32(thumbnail), alpha ? 1 : 0, wide ? 1 : 0,
                    destination.buffer?.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(size.width), Int32(size.height), stride,
                    row.baseAddress?.assumingMemoryBound(to: UInt8.self), destination.buffer == nil ? Self.pushRow : nil,
                    Unmanaged.passUnretained(destination).toOpaque(), cancellation
                )
            }
        }
        guard status == NUKE_STATUS_OK else { throw failure(status, thumbnail >= 0 ? "decoding the \(format.name) thumbnail" : "decoding the \(format.name) image") }
    }

    /// Decodes an 8-bit image without alpha to `target` from libheif's planar RGB: each plane goes
    /// through the core's resampler on its own, and the small results are interleaved. libheif's
    /// conversion to interleaved RGB and its full-size copy are skipped. The result equals
    /// ``decode(thumbnail:alpha:wide:size:into:)``'s (the resampler treats channels apart).
    ///
    /// `nil` when the image is not such a one: decode to interleaved RGB instead.
    ///
    /// The corresponding libheif function is `heif_decode_image` (planar RGB).
    func decodePlanes(thumbnail: Int, size: ImageSize, original: ImageSize, context: ImageDecodingContext) throws(ImageCodecError) -> Bitmap? {
        var planes = nukeheif_planes()
        let status = context.withShimCancellation { cancellation in
            nukeheif_decoder_decode_planes(decoder, Int32(thumbnail), Int32(size.width), Int32(size.height), &planes, cancellation)
        }
        if status == NUKE_STATUS_UNSUPPORTED { return nil }
        guard status == NUKE_STATUS_OK else { throw failure(status, thumbnail >= 0 ? "decoding the \(format.name) thumbnail" : "decoding the \(format.name) image") }
        defer { nukeheif_decoder_release_planes(decoder) }
        let rows = [planes.rows.0, planes.rows.1, planes.rows.2]
        let strides = [Int(planes.stride.0), Int(planes.stride.1), Int(planes.stride.2)]
        var reduced: [Bitmap] = []
        for plane in 0..<3 {
            try HEIFLibrary.checkCancellation(context, format: format)
            guard let first = rows[plane] else { return nil }
            let destination = try ImageRowDestination(size: size, pixelFormat: .gray8, alphaMode: .none, context: context, originalSize: original)
            destination.push(rows: UnsafeRawBufferPointer(start: first, count: strides[plane] * (size.height - 1) + size.width),
                             count: size.height, bytesPerRow: strides[plane])
            reduced.append(destination.finish().bitmap)
        }
        let target = ImageSize(width: reduced[0].width, height: reduced[0].height)
        return try context.allocator.makeBitmap(width: target.width, height: target.height, pixelFormat: .rgb8, alphaMode: AlphaMode.none) {
            (output) throws(ImageCodecError) in
            reduced[0].withUnsafeBytes { red in
                reduced[1].withUnsafeBytes { green in
                    reduced[2].withUnsafeBytes { blue in
                        for i in 0..<target.width * target.height {   // the reduced planes are packed
                            output[3 * i] = red[i]
                            output[3 * i + 1] = green[i]
                            output[3 * i + 2] = blue[i]
                        }
                    }
                }
            }
        }
    }

    /// The shim's row sink: hands one row to the destination its context points to.
    private static let pushRow: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int) -> Void = { context, row, length in
        guard let context else { return }
        Unmanaged<ImageRowDestination>.fromOpaque(context).takeUnretainedValue().push(row: UnsafeRawBufferPointer(start: row, count: length))
    }

    /// The primary image's ICC profile, when it has one no larger than `maxSize`.
    func iccProfile(maxSize: Int) -> Data? {
        var size = 0
        guard let bytes = nukeheif_decoder_icc(decoder, &size) else { return nil }
        defer { nukeheif_buffer_free(bytes) }
        return size <= maxSize ? Data(bytes: bytes, count: size) : nil
    }

    /// The primary image's EXIF block (TIFF header onwards), when it has one no larger than `maxSize`.
    func exif(maxSize: Int) -> Data? {
        var size = 0
        guard let bytes = nukeheif_decoder_exif(decoder, maxSize, &size) else { return nil }
        defer { nukeheif_buffer_free(bytes) }
        return Data(bytes: bytes, count: size)
    }
}
