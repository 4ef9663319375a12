#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels
internal import CJPEGShim

extension ImageEncoders {
    /// Encodes JPEG with libjpeg-turbo.
    ///
    /// Gray images (`PixelFormat.gray8`, `PixelFormat.gray16`, and gray with alpha) are
    /// written as grayscale JPEG, everything else as YCbCr from `PixelFormat.rgb8`: 4:2:0
    /// below quality 0.9, 4:4:4 (full-resolution chroma) from 0.9 up.
    /// JPEG has no alpha: pixels with alpha are composited onto
    /// `ImageEncodingOptions.background` (white by default), and 16-bit samples are rounded to
    /// 8 bits. Metadata follows `ImageEncodingOptions.metadata`
    /// (`Image.metadataToWrite(options:writesGray:)`): the ICC profile when it matches
    /// the pixels, and the EXIF block as APP1 with its Orientation set to the image's.
    public struct JPEG: ImageEncoding, Sendable {
        /// Quality (0…1 → libjpeg's 0…100), progressive output, colour profile.
        public var options: ImageEncodingOptions

        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            self.options = options
        }

        /// Rows compressed per call into libjpeg, between which the output is written out.
        static let batchRows = 32

        /// Encodes `image` (its first frame).
        ///
        /// The file is built with ``encode(_:to:)`` into a `Data`.
        /// - Throws: `ImageCodecError` `.encodingFailed` with libjpeg's message.
        public func encode(_ image: Image) throws -> Data {
            return try DataOutputStream.collecting { try encode(image, to: &$0) }
        }

        /// Encodes `image` (its first frame) into `stream` as it is compressed.
        ///
        /// Rows go to libjpeg `batchRows` at a time (converted to RGB or gray a batch at a
        /// time when the bitmap is in another format), and the bytes each batch produced are
        /// written to `stream` before the next: memory holds one batch of output, not the file
        /// (a progressive JPEG is the exception: libjpeg writes all its scans at the end).
        ///
        /// The corresponding libjpeg functions are `jpeg_start_compress`, `jpeg_write_scanlines`
        /// and `jpeg_finish_compress`, with a destination manager of the shim's.
        /// - Throws: `ImageCodecError` `.encodingFailed` with libjpeg's message, or the stream's error.
        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            let source = image.bitmap
            guard source.width > 0, source.height > 0 else {
                throw JPEGLibrary.encodingError("cannot encode an empty \(source.width)×\(source.height) image")
            }
            let format: PixelFormat = source.pixelFormat.isGray ? .gray8 : .rgb8
            let metadata = image.metadataToWrite(options: options, writesGray: format.isGray)
            let exif = metadata.exif.map { Data("Exif".utf8) + Data([0, 0]) + $0 }
            guard exif.map({ $0.count <= 65_533 }) ?? true else {
                throw JPEGLibrary.encodingError("the EXIF block of \(exif?.count ?? 0) bytes does not fit in one APP1 segment (65,533 bytes)")
            }
            let icc = metadata.iccProfile
            let quality = Int32((min(max(options.quality, 0), 1) * 100).rounded())

            let compressor = try JPEGCompressor()
            try icc.withOptionalBytes { iccBytes in
                try exif.withOptionalBytes { exifBytes in
                    var params = nukejpeg_encode_params(
                        width: UInt32(clamping: source.width), height: UInt32(clamping: source.height),
                        components: Int32(format.channelCount), bytes_per_row: 0,
                        quality: quality, progressive: options.isProgressive ? 1 : 0, full_chroma: quality >= 90 ? 1 : 0,
                        optimize: options.optimizesCoding ? 1 : 0,
                        icc: iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), icc_count: iccBytes.count,
                        exif: exifBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), exif_count: exifBytes.count
                    )
                    try compressor.start(&params)
                }
            }
            // Rows already in the file's layout go in place; others are converted a batch at a time.
            try compressor.compress(source, batchRows: Self.batchRows, to: &stream) { rows in
                source.pixelFormat == format ? nil
                    : source.pixelFormat.hasAlpha ? source.rows(rows).flattened(onto: options.background)
                    : source.rows(rows).converted(to: format)
            }
        }
    }
}
