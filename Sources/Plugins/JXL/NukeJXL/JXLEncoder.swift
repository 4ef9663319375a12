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
    /// `cjxl -q` does) or lossless (`ImageEncodingOptions.isLossless`), 8 or 16 bits,
    /// grey or colour, with alpha, and the ICC profile that `ImageEncodingOptions.metadata` keeps.
    ///
    /// `ImageEncodingOptions.isProgressive` writes progressive AC passes, as `cjxl -p`.
    /// `ImageEncodingOptions.compressionLevel` is libjxl's effort, 1 (fastest) to 9;
    /// default 7, as `cjxl`. Quality 0…1 is `cjxl`'s 0…100: distance 0.1 + (100 − q) × 0.09 from
    /// 30 up (q 90 is distance 1, visually lossless), steeper below. 16 bits per sample are kept when
    /// `ImageEncodingOptions.prefersHighBitDepth` and the bitmap has them. The image's
    /// orientation is written in the header (JPEG XL readers apply it), the pixels as they are.
    /// An image with several frames, or an `ImageAnimation`, becomes an animated JPEG XL.
    /// For a JPEG's lossless recompression, see ``JXLTranscoder``.
    ///
    /// The corresponding libjxl functions are `JxlEncoderSetFrameHeader`, `JxlEncoderAddImageFrame`
    /// and `JxlEncoderProcessOutput`.
    public struct JXL: AnimatedImageEncoding, Sendable {
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

        /// Encodes `image`; an image with several frames becomes an animation (durations in
        /// milliseconds, the image's loop count).
        ///
        /// - Throws: `ImageCodecError` `.encodingFailed` with what libjxl refused.
        public func encode(_ image: Image) throws -> Data {
            let frames = image.frames
            let first = Self.prepared(frames[0].bitmap, options: options)
            var writer = try Writer(encoder: self, like: first, metadata: image, animated: frames.count > 1, loopCount: image.loopCount)
            for (index, frame) in frames.enumerated() {
                try writer.add(index == 0 ? first : Self.prepared(frame.bitmap, options: options), duration: frame.duration ?? 0.1)
            }
            return try writer.finish()
        }

        /// Encodes every frame of `animation` (whole canvases, RGBA) as an animated JPEG XL, one
        /// frame at a time.
        ///
        /// - Throws: The frame decoder's errors, or `.encodingFailed`.
        public func encode(_ animation: ImageAnimation) throws -> Data {
            let iterator = try animation.makeIterator()
            var writer: Writer?
            while let frame = try iterator.next() {
                let bitmap = Self.prepared(frame.canvas, options: options)
                if writer == nil {
                    writer = try Writer(encoder: self, like: bitmap, metadata: nil, animated: true, loopCount: animation.loopCount)
                }
                try writer?.add(bitmap, duration: frame.info.duration)
            }
            guard let writer else {
                throw JXLLibrary.encodingError("the animation has no frame")
            }
            return try writer.finish()
        }

        /// The bitmap as libjxl takes it: straight alpha, 8 bits (16 when asked and present).
        static func prepared(_ bitmap: Bitmap, options: ImageEncodingOptions) -> Bitmap {
            let straight = bitmap.alphaMode == .premultiplied ? bitmap.unpremultiplied() : bitmap
            let bits = options.prefersHighBitDepth && straight.pixelFormat.bitsPerChannel == 16 ? 16 : 8
            let format = PixelFormat(channels: straight.pixelFormat.channels, bitsPerChannel: bits)
            return straight.pixelFormat == format ? straight : straight.converted(to: format)
        }

        func parameters(for format: PixelFormat) -> nukejxl_encode_params {
            var params = nukejxl_encode_params()
            params.lossless = options.isLossless ? 1 : 0
            params.progressive = options.isProgressive ? 1 : 0
            let quality = min(max(options.quality, 0), 1) * 100
            params.distance = Float(min(max(distance ?? Self.distance(forQuality: quality), 0.1), 25))
            params.effort = Int32(min(max(options.compressionLevel ?? 7, 1), 9))
            params.channels = UInt32(format.channelCount)
            params.bits = UInt32(format.bitsPerChannel)
            return params
        }
    }
}

extension ImageEncoders.JXL {
    /// Frames of one size and format added to one libjxl encoder.
    struct Writer {
        private let encoder: OwnedEncoder
        private let format: PixelFormat
        private let width: Int
        private let height: Int
        private var added = 0

        /// Starts an encoder for frames like `first`, with the ICC profile and orientation of
        /// `metadata` (an image; none for an animation's canvases).
        init(encoder options: ImageEncoders.JXL, like first: Bitmap, metadata: Image?, animated: Bool, loopCount: Int) throws {
            try JXLLibrary.load(.encoding)
            format = first.pixelFormat
            width = first.width
            height = first.height
            var params = options.parameters(for: format)
            params.orientation = UInt32(metadata?.orientation.rawValue ?? 1)
            let icc = metadata?.metadataToWrite(options: options.options, writesGray: format.isGray).iccProfile
            guard let made = nukejxl_encoder_create(UInt32(width), UInt32(height), &params, animated ? 1 : 0) else {
                throw JXLLibrary.encodingError("libjxl could not create an encoder (out of memory)")
            }
            encoder = OwnedEncoder(made)
            let pointer = encoder.pointer
            let status = icc.withOptionalBytes { bytes in
                params.icc = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                params.icc_size = bytes.count
                return nukejxl_encoder_start(pointer, &params, UInt32(min(max(loopCount, 0), Int(UInt32.max))))
            }
            guard status == NUKE_STATUS_OK else { throw failure(status, "starting the encoder") }
        }

        mutating func add(_ bitmap: Bitmap, duration: Double) throws {
            guard bitmap.width == width, bitmap.height == height, bitmap.pixelFormat == format else {
                throw JXLLibrary.encodingError(
                    "JPEG XL frame \(added) is \(bitmap.width)×\(bitmap.height) \(bitmap.pixelFormat), the first \(width)×\(height) \(format): frames must match")
            }
            let milliseconds = UInt32((AnimationFrameInfo.storableDuration(duration) * 1000).rounded())
            let pointer = encoder.pointer
            let status = bitmap.withUnsafeBytes { pixels in
                nukejxl_encoder_add_frame(pointer, pixels.bindMemory(to: UInt8.self).baseAddress!, bitmap.bytesPerRow, milliseconds)
            }
            guard status == NUKE_STATUS_OK else { throw failure(status, "adding frame \(added)") }
            added += 1
        }

        func finish() throws -> Data {
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            let status = nukejxl_encoder_finish(encoder.pointer, &output, &size)
            defer { nukejxl_buffer_free(output) }
            guard status == NUKE_STATUS_OK, let output else { throw failure(status, "encoding") }
            return Data(bytes: output, count: size)
        }

        private func failure(_ status: nuke_status, _ what: String) -> ImageCodecError {
            JXLLibrary.encodingError(status: status, diagnostics: nukejxl_encoder_diagnostics(encoder.pointer).pointee, context: "JPEG XL: \(what)")
        }
    }

    /// The one owner of a libjxl encoder.
    final class OwnedEncoder {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { nukejxl_encoder_destroy(pointer) }
    }
}
