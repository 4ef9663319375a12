#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJXLShim
import NukeCore
import NukePluginKit
import NukePixels

extension ImageEncoders {
    /// Encodes JPEG XL with libjxl: lossy (a Butteraugli distance, or a quality mapped to one as
    /// `cjxl -q` does) or lossless (``NukeCore/ImageEncodingOptions/isLossless``), 8 or 16 bits,
    /// grey or colour, with alpha, and the ICC profile that ``NukeCore/ImageEncodingOptions/metadata`` keeps.
    ///
    /// ``NukeCore/ImageEncodingOptions/isProgressive`` writes progressive AC passes, as `cjxl -p`.
    /// ``NukeCore/ImageEncodingOptions/compressionLevel`` is libjxl's effort, 1 (fastest) to 9;
    /// default 7, as `cjxl`. Quality 0…1 is `cjxl`'s 0…100: distance 0.1 + (100 − q) × 0.09 from
    /// 30 up (q 90 is distance 1, visually lossless), steeper below. 16 bits per sample are kept when
    /// ``NukeCore/ImageEncodingOptions/prefersHighBitDepth`` and the bitmap has them. The image's
    /// orientation is written in the header (JPEG XL readers apply it), the pixels as they are.
    /// For a JPEG's lossless recompression, see
    /// ``JXLTranscoder``.
    ///
    /// The corresponding libjxl functions are `JxlEncoderAddImageFrame` and `JxlEncoderProcessOutput`.
    public struct JXL: ImageEncoding, Sendable {
        public var options: ImageEncodingOptions
        /// The Butteraugli distance (0.1…25; 1 is visually lossless); `nil` to derive it from the quality.
        public var distance: Double?

        public init(options: ImageEncodingOptions = ImageEncodingOptions(), distance: Double? = nil) {
            self.options = options
            self.distance = distance
        }

        /// `cjxl`'s mapping of its `-q` (0…100) to a distance (libjxl 0.7 tools/cjxl_main.cc).
        public static func distance(forQuality quality: Double) -> Double {
            if quality >= 100 { return 0 }
            if quality >= 30 { return 0.1 + (100 - quality) * 0.09 }
            let exponent: Double = (30 - quality) / 5
            return 6.4 + pow(Double(2.5), exponent) / 6.25
        }

        /// - Throws: ``NukeCore/ImageCodecError`` `.encodingFailed` with what libjxl refused.
        public func encode(_ image: Image) throws -> Data {
            let straight = image.bitmap.alphaMode == .premultiplied ? image.bitmap.unpremultiplied() : image.bitmap
            let bits = options.prefersHighBitDepth && straight.pixelFormat.bitsPerChannel == 16 ? 16 : 8
            let format = PixelFormat(channels: straight.pixelFormat.channels, bitsPerChannel: bits)
            let bitmap = straight.pixelFormat == format ? straight : straight.converted(to: format)
            let icc = image.metadataToWrite(options: options, writesGray: format.isGray).iccProfile
            var params = nukejxl_encode_params()
            params.lossless = options.isLossless ? 1 : 0
            params.progressive = options.isProgressive ? 1 : 0
            params.orientation = UInt32(image.orientation.rawValue)
            let quality = min(max(options.quality, 0), 1) * 100
            params.distance = Float(min(max(distance ?? Self.distance(forQuality: quality), 0.1), 25))
            params.effort = Int32(min(max(options.compressionLevel ?? 7, 1), 9))
            params.channels = UInt32(format.channelCount)
            params.bits = UInt32(bits)
            var diagnostics = nuke_diagnostics()
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            let status = JXLTranscoder.withBytes(icc) { iccBytes in
                params.icc = iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                params.icc_size = iccBytes.count
                return bitmap.withUnsafeBytes { pixels in
                    nukejxl_encode(pixels.bindMemory(to: UInt8.self).baseAddress!, UInt32(bitmap.width), UInt32(bitmap.height),
                                   bitmap.bytesPerRow, &params, &output, &size, &diagnostics)
                }
            }
            defer { nukejxl_buffer_free(output) }
            guard status == NUKE_STATUS_OK, let output else {
                throw JXLLibrary.encodingError(status: status, diagnostics: diagnostics, context: "encoding JPEG XL")
            }
            return Data(bytes: output, count: size)
        }
    }
}
