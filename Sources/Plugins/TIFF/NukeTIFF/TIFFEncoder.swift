#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CTIFFShim
import NukeCore
import NukePluginKit

extension ImageEncoders {
    /// Encodes TIFF with libtiff.
    ///
    /// Writes the bitmap's channels as they are (gray, gray+alpha, RGB, RGBA) at its bit depth
    /// (8 or 16 bits per sample), contiguous, in strips of libtiff's default size; alpha as an
    /// extra sample, associated when the bitmap is premultiplied, unassociated otherwise. Each
    /// frame of the image is a page. The image's orientation is written as the Orientation tag,
    /// its ICC profile as the ICCProfile tag when `ImageEncodingOptions.metadata` keeps it
    /// (`Image.metadataToWrite(options:writesGray:)`).
    ///
    /// ``compression``: LZW (the default) and Deflate with the horizontal predictor, PackBits,
    /// or none; `ImageEncodingOptions.compressionLevel` (1-9) sets Deflate's level.
    ///
    /// A TIFF's directory points back at its strips, so libtiff builds the file in memory: the
    /// streaming `encode(_:to:)` writes it out at the end.
    public struct TIFF: ImageEncoding, Sendable {
        /// How the strips are compressed.
        public enum Compression: Sendable, Hashable {
            case none
            case lzw
            case deflate
            case packBits

            var tag: Int32 {
                switch self {
                case .none: 1
                case .lzw: 5
                case .deflate: 8
                case .packBits: 32773
                }
            }
        }

        public var options: ImageEncodingOptions
        public var compression: Compression

        /// Creates an encoder.
        ///
        /// - Parameters:
        ///   - options: A `compressionLevel` outside 1...9 is a programming error and traps.
        ///   - compression: The strips' compression (LZW by default).
        public init(options: ImageEncodingOptions = ImageEncodingOptions(), compression: Compression = .lzw) {
            if let level = options.compressionLevel {
                precondition((1...9).contains(level), "TIFF Deflate level must be 1...9, got \(level)")
            }
            self.options = options
            self.compression = compression
        }

        /// Encodes every frame of the image as a page.
        ///
        /// - Throws: `ImageCodecError` `.encodingFailed` with libtiff's message.
        public func encode(_ image: Image) throws -> Data {
            guard let encoder = nuketiff_encoder_create() else {
                throw TIFFLibrary.encodingError("libtiff could not allocate an encoder")
            }
            defer { nuketiff_encoder_destroy(encoder) }
            func check(_ status: nuke_status, _ what: String) throws(ImageCodecError) {
                guard status == NUKE_STATUS_OK else {
                    throw TIFFLibrary.encodingError(status: status, diagnostics: nuketiff_encoder_diagnostics(encoder).pointee, context: what)
                }
            }
            for frame in image.frames {
                let bitmap = frame.bitmap
                guard bitmap.width > 0, bitmap.height > 0, bitmap.width <= Int(UInt32.max), bitmap.height <= Int(UInt32.max) else {
                    throw TIFFLibrary.encodingError("cannot encode a \(bitmap.width)×\(bitmap.height) image")
                }
                let metadata = image.metadataToWrite(options: options, writesGray: bitmap.pixelFormat.isGray)
                var params = nuketiff_encode_params()
                params.width = UInt32(bitmap.width)
                params.height = UInt32(bitmap.height)
                params.channels = Int32(bitmap.pixelFormat.channelCount)
                params.bits = Int32(bitmap.pixelFormat.bitsPerChannel)
                params.premultiplied = bitmap.alphaMode == .premultiplied ? 1 : 0
                params.compression = compression.tag
                params.level = Int32(options.compressionLevel ?? -1)
                params.orientation = Int32(image.orientation.rawValue)
                try metadata.iccProfile.withOptionalBytes { icc in
                    params.icc = icc.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    params.icc_size = UInt32(clamping: icc.count)
                    try check(nuketiff_encoder_start_page(encoder, &params), "starting a page")
                }
                try bitmap.withUnsafeBytes { (pixels) throws(ImageCodecError) in
                    guard let base = pixels.baseAddress else { return }
                    try check(nuketiff_encoder_write_rows(encoder, base.assumingMemoryBound(to: UInt8.self), bitmap.bytesPerRow, UInt32(bitmap.height)),
                              "writing the rows")
                }
                try check(nuketiff_encoder_end_page(encoder), "writing the page's directory")
            }
            try check(nuketiff_encoder_finish(encoder), "closing the file")
            var size = 0
            guard let bytes = nuketiff_encoder_output(encoder, &size) else {
                throw TIFFLibrary.encodingError("libtiff wrote nothing")
            }
            return Data(bytes: bytes, count: size)
        }
    }
}
