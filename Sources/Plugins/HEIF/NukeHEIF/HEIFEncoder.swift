#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CHEIFShim
import NukeCore
import NukePluginKit
import NukePixels

extension ImageEncoders {
    /// Encodes HEIC (x265) or AVIF (aom) with libheif: quality, lossless (4:4:4), alpha and the
    /// ICC profile (when `ImageEncodingOptions.preservesColorProfile`).
    ///
    /// Quality 0…1 maps to libheif's 0…100. 16-bit images are written with 8 bits per sample.
    ///
    /// The corresponding libheif functions are `heif_context_encode_image` and `heif_context_write`.
    public struct HEIF: ImageEncoding, Sendable {
        /// `.heic` (or `.heif`) for HEVC, `.avif` for AV1.
        public var format: ImageType
        public var options: ImageEncodingOptions
        /// Also store a thumbnail that fits this many pixels a side, as cameras do (decode to size
        /// then uses it); `nil` for none.
        public var thumbnailSize: Int?

        public init(format: ImageType = .heic, options: ImageEncodingOptions = ImageEncodingOptions(), thumbnailSize: Int? = nil) {
            self.format = format
            self.options = options
            self.thumbnailSize = thumbnailSize
        }

        /// - Throws: `ImageCodecError` `.encodingFailed` with libheif's message.
        public func encode(_ image: Image) throws -> Data {
            // HEIF's display transform (irot/imir) is not written: an image that is not upright
            // is turned upright as it is encoded, so every reader shows it the same way.
            let upright = image.bitmap.oriented(image.orientation)
            let straight = upright.alphaMode == .premultiplied ? upright.unpremultiplied() : upright
            let pixelFormat: PixelFormat = straight.pixelFormat.hasAlpha ? .rgba8 : .rgb8
            let bitmap = straight.pixelFormat == pixelFormat ? straight : straight.converted(to: pixelFormat)
            let icc = image.metadataToWrite(options: options, writesGray: false).iccProfile
            var params = nukeheif_encode_params()
            params.av1 = format == .avif ? 1 : 0
            params.quality = Int32((min(max(options.quality, 0), 1) * 100).rounded())
            params.lossless = options.isLossless ? 1 : 0
            params.has_alpha = pixelFormat.hasAlpha ? 1 : 0
            params.thumbnail_size = Int32(clamping: thumbnailSize ?? 0)
            var diagnostics = nuke_diagnostics()
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            let status = icc.withOptionalBytes { iccBytes in
                params.icc = iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                params.icc_size = iccBytes.count
                return bitmap.withUnsafeBytes { pixels in
                    nukeheif_encode(pixels.bindMemory(to: UInt8.self).baseAddress!, Int32(bitmap.width), Int32(bitmap.height),
                                    bitmap.bytesPerRow, &params, &output, &size, &diagnostics)
                }
            }
            defer { nukeheif_buffer_free(output) }
            guard status == NUKE_STATUS_OK, let output else {
                throw HEIFLibrary.encodingError(status: status == NUKE_STATUS_OK ? NUKE_STATUS_INTERNAL : status, diagnostics: diagnostics,
                                                format: format, context: "encoding \(format.name)")
            }
            return Data(bytes: output, count: size)
        }
    }
}
