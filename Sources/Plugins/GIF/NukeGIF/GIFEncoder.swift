internal import CGIFShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit
import NukePixels

extension ImageEncoders {
    /// Encodes still and animated GIF with giflib.
    ///
    /// Each frame is written whole (the full canvas at 0,0) with a local colour table:
    /// - up to 256 distinct colours (255 when some pixels are transparent) are kept exactly;
    /// - more are reduced to 256 (255) by giflib's median-cut quantiser (`GifQuantizeBuffer`,
    ///   Heckbert's method, MIT licensed), without dithering;
    /// - pixels with alpha below 128 become the transparent index; others are written opaque.
    ///
    /// Every frame of an animation is disposed to background, so the next frame starts from a
    /// clear canvas, its transparent pixels stay transparent, and decoding gives back the
    /// canvases given (and every frame is independent, so seeks cost one frame). Durations are written in
    /// centiseconds (rounded); an animation writes a NETSCAPE2.0 loop count (`Image.loopCount`
    /// or `ImageAnimation.loopCount` as stored: 0 = forever); a still image writes none.
    ///
    /// The corresponding giflib functions are `EGifOpen`, `EGifPutImageDesc`, `EGifPutLine` and
    /// `EGifCloseFile`.
    public struct GIF: AnimatedImageEncoding, Sendable {
        public var options: ImageEncodingOptions

        /// Creates an encoder. GIF has no quality or compression setting; options are kept for
        /// the registry's sake.
        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            self.options = options
        }

        /// Encodes every frame of `image`, with its duration and loop count.
        ///
        /// - Throws: `ImageCodecError` `.encodingFailed` (an empty image, a side over
        ///   65,535, frames of different sizes) with giflib's message where it gave one.
        ///
        /// GIF has no orientation: an image that is not upright is turned upright as it is written.
        public func encode(_ image: Image) throws -> Data {
            return try DataOutputStream.collecting { try encode(image, to: &$0) }
        }

        /// Encodes every frame of `image` into `stream`, each frame's bytes as it is written.
        ///
        /// - Throws: As ``encode(_:)-(Image)``, or the stream's error.
        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            let animated = image.frames.count > 1
            var frames = image.frames.makeIterator()
            let orientation = image.orientation
            let size = ImageSize(width: image.width, height: image.height)
            try Self.encode(
                width: orientation.swapsDimensions ? size.height : size.width, height: orientation.swapsDimensions ? size.width : size.height,
                loopCount: animated ? image.loopCount : nil,
                next: { () throws(ImageCodecError) -> (Bitmap, Double)? in
                    frames.next().map { ($0.bitmap.oriented(orientation), $0.duration ?? 0) }
                },
                sink: { try stream.write($0) }
            )
        }

        /// Encodes `animation`, decoding one frame at a time.
        ///
        /// - Throws: `ImageCodecError`: the frame decoder's errors, `.encodingFailed`.
        public func encode(_ animation: ImageAnimation) throws -> Data {
            return try DataOutputStream.collecting { try encode(animation, to: &$0) }
        }

        /// Encodes `animation` into `stream`, one frame at a time: each frame's bytes go to the
        /// stream once it is encoded (GIF never goes back), so neither the frames nor the file
        /// are held.
        ///
        /// - Throws: `ImageCodecError`: the frame decoder's errors, `.encodingFailed`;
        ///   or the stream's error.
        public func encode(_ animation: ImageAnimation, to stream: inout some SeekableImageOutputStream) throws {
            let iterator = try animation.makeIterator()
            try Self.encode(
                width: animation.canvasSize.width, height: animation.canvasSize.height,
                loopCount: animation.frameCount > 1 ? animation.loopCount : nil,
                next: { () throws(ImageCodecError) -> (Bitmap, Double)? in
                    try iterator.next().map { ($0.canvas, $0.info.duration) }
                },
                sink: { try stream.write($0) }
            )
        }

        /// Encodes the frames `next` gives into `sink`, the bytes of each frame as it is written.
        private static func encode(
            width: Int, height: Int, loopCount: Int?,
            next: () throws(ImageCodecError) -> (Bitmap, Double)?,
            sink: (UnsafeRawBufferPointer) throws -> Void
        ) throws {
            guard width > 0, height > 0, width <= 65535, height <= 65535 else {
                throw GIFLibrary.encodingError("cannot encode a \(width)×\(height) image: GIF sides are 1…65,535 pixels")
            }
            var diagnostics = nuke_diagnostics()
            var handle: OpaquePointer?
            let status = nukegif_encoder_create(UInt32(width), UInt32(height), Int32(clamping: loopCount.map { min($0, 65535) } ?? -1), &handle, &diagnostics)
            guard status == NUKE_STATUS_OK, let encoder = handle else { throw GIFLibrary.encodingError(status: status, diagnostics: diagnostics) }
            var finished = false
            defer { if !finished { nukegif_encoder_destroy(encoder) } }
            var index = 0
            let animated = loopCount != nil
            while let (frame, duration) = try next() {
                guard frame.width == width, frame.height == height else {
                    throw GIFLibrary.encodingError("frame \(index + 1) is \(frame.width)×\(frame.height), not \(width)×\(height) like the first")
                }
                let indexed = try GIFPalette.indexed(frame)
                let delay = UInt32(clamping: Int((AnimationFrameInfo.storableDuration(duration) * 100).rounded()))
                let status = indexed.indices.withUnsafeBufferPointer { pixels in
                    indexed.palette.withUnsafeBufferPointer { palette in
                        nukegif_encoder_add_frame(
                            encoder, pixels.baseAddress!, 0, 0, UInt32(width), UInt32(height),
                            palette.baseAddress!, UInt32(indexed.palette.count / 3),
                            Int32(indexed.transparentIndex ?? -1), delay,
                            animated ? 2 : 1, &diagnostics
                        )
                    }
                }
                guard status == NUKE_STATUS_OK else { throw GIFLibrary.encodingError(status: status, diagnostics: diagnostics, context: "frame \(index + 1)") }
                var bytes: UnsafePointer<UInt8>?
                let count = nukegif_encoder_pending(encoder, &bytes)
                if count > 0, let bytes {
                    try sink(UnsafeRawBufferPointer(start: bytes, count: count))
                    nukegif_encoder_take(encoder)
                }
                index += 1
            }
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            finished = true
            let result = nukegif_encoder_finish(encoder, &output, &length, &diagnostics)
            guard result == NUKE_STATUS_OK, let output else { throw GIFLibrary.encodingError(status: result, diagnostics: diagnostics) }
            defer { nukegif_buffer_free(output) }
            try sink(UnsafeRawBufferPointer(start: output, count: length))
        }
    }
}
