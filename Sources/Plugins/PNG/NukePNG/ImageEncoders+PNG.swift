internal import CPNGShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageEncoders {
    /// Encodes PNG with libpng.
    ///
    /// Writes the bitmap's channels as they are (gray, gray+alpha, RGB, RGBA) at its bit
    /// depth (16-bit bitmaps as 16-bit PNG, others as 8-bit); premultiplied alpha is
    /// un-premultiplied first. ``ImageEncodingOptions/isProgressive`` writes Adam7
    /// interlacing, ``ImageEncodingOptions/compressionLevel`` sets the zlib level (libpng's
    /// default when `nil`). The image's ICC profile (when
    /// ``ImageEncodingOptions/preservesColorProfile``), gamma, sRGB intent and EXIF block
    /// are written as `iCCP`, `gAMA`, `sRGB` and `eXIf`.
    ///
    /// The corresponding libpng function is `png_write_image`.
    public struct PNG: ImageEncoding, Sendable {
        public var options: ImageEncodingOptions

        /// Creates an encoder.
        ///
        /// - Parameter options: A `compressionLevel` outside 0...9 is a programming error and traps.
        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            if let level = options.compressionLevel {
                precondition((0...9).contains(level), "PNG compression level must be 0...9, got \(level)")
            }
            self.options = options
        }

        /// Encodes the image's first frame.
        ///
        /// - Throws: ``ImageCodecError`` `.encodingFailed` with libpng's message (for
        ///   example, an empty image or an ICC profile libpng rejects).
        ///
        /// The corresponding libpng function is `png_write_image`.
        public func encode(_ image: Image) throws -> Data {
            let bitmap = image.bitmap.unpremultiplied()
            func failure(_ message: String) -> ImageCodecError {
                ImageCodecError(.encodingFailed, stage: .encoding, format: .png, codec: LibPNG.codecName, message: message)
            }
            guard bitmap.width > 0, bitmap.height > 0 else {
                throw failure("cannot encode an empty \(bitmap.width)×\(bitmap.height) image")
            }
            guard bitmap.width <= 0x7FFF_FFFF, bitmap.height <= 0x7FFF_FFFF else {
                throw failure("image size \(bitmap.width)×\(bitmap.height) exceeds PNG's maximum")
            }
            let icc = options.preservesColorProfile ? image.colorInfo.iccProfile : nil
            var params = nukepng_encode_params()
            params.width = UInt32(bitmap.width)
            params.height = UInt32(bitmap.height)
            params.channels = Int32(bitmap.pixelFormat.channelCount)
            params.bit_depth = Int32(bitmap.pixelFormat.bitsPerChannel)
            params.row_bytes = bitmap.bytesPerRow
            params.compression_level = Int32(options.compressionLevel ?? -1)
            params.interlaced = options.isProgressive ? 1 : 0
            params.gamma = image.colorInfo.gamma ?? 0
            params.srgb_intent = Int32(image.colorInfo.sRGBIntent ?? -1)

            var output: UnsafeMutablePointer<UInt8>?
            var outputSize = 0
            var diagnostics = nuke_diagnostics()
            let status = bitmap.withUnsafeBytes { pixels in
                Self.withBytes(of: icc) { iccBytes in
                    Self.withBytes(of: image.exif) { exifBytes in
                        params.pixels = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.icc = iccBytes?.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.icc_size = iccBytes?.count ?? 0
                        params.exif = exifBytes?.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.exif_size = exifBytes?.count ?? 0
                        return nukepng_encode(&params, &output, &outputSize, &diagnostics)
                    }
                }
            }
            guard status == NUKE_STATUS_OK, let output else {
                nukepng_buffer_free(output)
                let message = withUnsafeBytes(of: &diagnostics.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                throw failure(message.isEmpty ? "libpng failed with status \(status.rawValue)" : message)
            }
            return Data(bytesNoCopy: output, count: outputSize, deallocator: .custom { bytes, _ in nukepng_buffer_free(bytes) })
        }

        private static func withBytes<R>(of data: Data?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
            guard let data, !data.isEmpty else { return body(nil) }
            return data.withUnsafeBytes { body($0) }
        }
    }
}
