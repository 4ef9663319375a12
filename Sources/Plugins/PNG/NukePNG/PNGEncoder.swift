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
    /// un-premultiplied first. `ImageEncodingOptions.isProgressive` writes Adam7
    /// interlacing, `ImageEncodingOptions.compressionLevel` sets the zlib level (libpng's
    /// default when `nil`). The image's gamma and sRGB intent
    /// are written as `gAMA` and `sRGB`; its ICC profile and EXIF block as `iCCP` and `eXIf`, as
    /// `ImageEncodingOptions.metadata` keeps them (`Image.metadataToWrite(options:writesGray:)`).
    ///
    /// The corresponding libpng functions are `png_write_row` and `png_write_end`, streaming
    /// (`encode(_:to:)`).
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

        /// Rows written per call into libpng, between which the output is written out.
        static let batchRows = 32

        /// Encodes the image: a still PNG, or an APNG when it has several frames.
        ///
        /// The file is built with `encode(_:to:)` into a `Data`.
        /// - Throws: `ImageCodecError` `.encodingFailed` with libpng's message (for
        ///   example, an empty image or an ICC profile libpng rejects).
        public func encode(_ image: Image) throws -> Data {
            if image.frames.count > 1 { return try encodeAnimated(image) }
            return try DataOutputStream.collecting { try encode(image, to: &$0) }
        }

        /// Encodes the image's first frame into `stream` as it is compressed.
        ///
        /// Rows go to libpng `batchRows` at a time (a premultiplied bitmap is un-premultiplied
        /// a batch at a time; an interlaced one, whose rows are read once per pass, as a whole),
        /// and the bytes each batch produced are written to `stream` before the next.
        ///
        /// The corresponding libpng functions are `png_write_info`, `png_write_row` and
        /// `png_write_end`, with `png_set_write_fn`.
        /// - Throws: `ImageCodecError` `.encodingFailed` with libpng's message, or the stream's error.
        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            if image.frames.count > 1 {
                let data = try encodeAnimated(image)
                try data.withUnsafeBytes { try stream.write($0) }
                return
            }
            // Interlaced rows are read once per pass: un-premultiply those once, not seven times.
            let source = options.isProgressive ? image.bitmap.unpremultiplied() : image.bitmap
            guard source.width > 0, source.height > 0 else {
                throw PNGLibrary.encodingError("cannot encode an empty \(source.width)×\(source.height) image")
            }
            guard source.width <= 0x7FFF_FFFF, source.height <= 0x7FFF_FFFF else {
                throw PNGLibrary.encodingError("image size \(source.width)×\(source.height) exceeds PNG's maximum")
            }
            let metadata = image.metadataToWrite(options: options, writesGray: source.pixelFormat.isGray)
            let icc = metadata.iccProfile
            var params = nukepng_encode_params()
            params.width = UInt32(source.width)
            params.height = UInt32(source.height)
            params.channels = Int32(source.pixelFormat.channelCount)
            params.bit_depth = Int32(source.pixelFormat.bitsPerChannel)
            params.compression_level = Int32(options.compressionLevel ?? -1)
            params.interlaced = options.isProgressive ? 1 : 0
            // Only values a PNG can hold: a finite positive gamma, an intent 0–3 (anything else is left out).
            params.gamma = image.colorInfo.gamma.flatMap { $0.isFinite && $0 > 0 && $0 <= 21_474 ? $0 : nil } ?? 0
            params.srgb_intent = image.colorInfo.sRGBIntent.flatMap { (0...3).contains($0) ? Int32($0) : nil } ?? -1

            let writer = try PNGWriter()
            var passes = 1
            try icc.withOptionalBytes { iccBytes in
                try metadata.exif.withOptionalBytes { exifBytes in
                    params.icc = iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    params.icc_size = iccBytes.count
                    params.exif = exifBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    params.exif_size = exifBytes.count
                    passes = try writer.start(&params)
                }
            }
            try writer.compress(source, batchRows: Self.batchRows, passes: passes, to: &stream) { rows in
                source.alphaMode == .premultiplied ? source.rows(rows).unpremultiplied() : nil
            }
        }
    }
}
