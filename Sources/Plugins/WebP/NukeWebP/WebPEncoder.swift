#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CWebPShim
import NukeCore
import NukePluginKit
import NukePixels

extension ImageEncoders {
    /// Encodes WebP with libwebp: lossy (`ImageEncodingOptions.quality`) or lossless
    /// (`ImageEncodingOptions.isLossless`), with alpha, and animated WebP from an
    /// image's frames or an `ImageAnimation`.
    ///
    /// The ICC profile, EXIF and XMP that `ImageEncodingOptions.metadata` keeps
    /// (`Image.metadataToWrite(options:writesGray:)`) are written into `ICCP`, `EXIF`
    /// and `XMP ` chunks with libwebp's muxer. Chromium ignores a WebP's EXIF orientation: decode
    /// with `ImageDecodingContext.appliesOrientation` for thumbnails that show upright.
    /// `ImageEncodingOptions.compressionLevel` sets libwebp's `method`, 0 (fastest) to 6
    /// (smallest); default 4, as `cwebp`. Quality 0…1 maps to libwebp's 0…100; for lossless it
    /// is the effort.
    ///
    /// An animation is written as its frames arrive: each frame's rectangle that changed since the
    /// frame before is encoded on its own and appended to the file, which replaces those pixels
    /// when played (no blending or disposal), so only the file, the previous canvas and one
    /// frame's encoding are held. A frame the same as the one before lengthens that one instead.
    /// Animations carry no metadata.
    ///
    /// The corresponding libwebp functions are `WebPEncode` and `WebPMuxAssemble`.
    public struct WebP: AnimatedImageEncoding, Sendable {
        public var options: ImageEncodingOptions

        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            self.options = options
        }

        /// Encodes `image`; an image with several frames becomes an animated WebP.
        ///
        /// - Throws: `ImageCodecError` `.encodingFailed` with libwebp's error.
        public func encode(_ image: Image) throws -> Data {
            if image.frames.count > 1 {
                var writer = try AnimationWriter(canvas: ImageSize(width: image.width, height: image.height), loopCount: image.loopCount, encoder: self)
                for frame in image.frames { try writer.append(frame.bitmap, duration: frame.duration ?? 0.1) }
                return try writer.finish()
            }
            let bitmap = Self.prepared(image.bitmap)
            let hasAlpha = bitmap.pixelFormat.hasAlpha
            let metadata = image.metadataToWrite(options: options, writesGray: false)
            return try metadata.iccProfile.withOptionalBytes { icc in
                try metadata.exif.withOptionalBytes { exif in
                    try metadata.xmp.withOptionalBytes { xmp in
                        var params = parameters(hasAlpha: hasAlpha)
                        params.icc = icc.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.icc_size = icc.count
                        params.exif = exif.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.exif_size = exif.count
                        params.xmp = xmp.baseAddress?.assumingMemoryBound(to: UInt8.self)
                        params.xmp_size = xmp.count
                        var diagnostics = nuke_diagnostics()
                        var output: UnsafeMutablePointer<UInt8>?
                        var size = 0
                        let status = bitmap.withUnsafeBytes { pixels in
                            nukewebp_encode(pixels.bindMemory(to: UInt8.self).baseAddress!, Int32(bitmap.width), Int32(bitmap.height),
                                            bitmap.bytesPerRow, &params, &output, &size, &diagnostics)
                        }
                        defer { nukewebp_buffer_free(output) }
                        guard status == NUKE_STATUS_OK, let output else {
                            throw WebPLibrary.encodingError(status: NUKE_STATUS_INTERNAL, diagnostics: diagnostics, context: "encoding WebP")
                        }
                        return Data(bytes: output, count: size)
                    }
                }
            }
        }

        /// Encodes every frame of `animation` as an animated WebP, one frame at a time.
        ///
        /// - Throws: The frame decoder's errors, or `.encodingFailed`.
        public func encode(_ animation: ImageAnimation) throws -> Data {
            let iterator = try animation.makeIterator()
            var writer = try AnimationWriter(canvas: animation.canvasSize, loopCount: animation.loopCount, encoder: self)
            while let frame = try iterator.next() {
                try writer.append(frame.canvas, duration: frame.info.duration)
            }
            return try writer.finish()
        }

        /// Encodes every frame of `animation` as an animated WebP into `stream`, one frame at a
        /// time: each frame's chunk goes to the stream once the next frame has set its duration,
        /// and the header's RIFF size and flags are written over at the end. Only the last frame's
        /// chunk and the previous canvas are held.
        ///
        /// - Throws: The frame decoder's errors, `.encodingFailed`, or the stream's error.
        public func encode(_ animation: ImageAnimation, to stream: inout some SeekableImageOutputStream) throws {
            let origin = stream.position
            let iterator = try animation.makeIterator()
            var writer = try AnimationWriter(canvas: animation.canvasSize, loopCount: animation.loopCount, encoder: self)
            while let frame = try iterator.next() {
                try writer.append(frame.canvas, duration: frame.info.duration)
                try writer.writeSettled(to: &stream)
            }
            try writer.finish(to: &stream, origin: origin)
        }

        func parameters(hasAlpha: Bool) -> nukewebp_encode_params {
            var params = nukewebp_encode_params()
            params.quality = Float(min(max(options.quality, 0), 1) * 100)
            params.method = Int32(min(max(options.compressionLevel ?? 4, 0), 6))
            params.lossless = options.isLossless ? 1 : 0
            params.has_alpha = hasAlpha ? 1 : 0
            return params
        }

        /// The bitmap as libwebp takes it: 8-bit RGB, or RGBA with straight alpha.
        static func prepared(_ bitmap: Bitmap) -> Bitmap {
            let straight = bitmap.alphaMode == .premultiplied ? bitmap.unpremultiplied() : bitmap
            let format: PixelFormat = straight.pixelFormat.hasAlpha ? .rgba8 : .rgb8
            return straight.pixelFormat == format ? straight : straight.converted(to: format)
        }
    }
}

extension ImageEncoders.WebP {
    /// Adds whole-canvas frames to the shim's animation writer, which encodes the rectangle that
    /// changed in each and appends it to the file.
    struct AnimationWriter {
        private let encoder: OwnedAnimEncoder
        private let canvas: ImageSize
        private var milliseconds = 0
        private var written = 0

        init(canvas: ImageSize, loopCount: Int, encoder: ImageEncoders.WebP) throws {
            var params = encoder.parameters(hasAlpha: true)
            guard let made = nukewebp_anim_encoder_create(Int32(canvas.width), Int32(canvas.height), Int32(min(max(loopCount, 0), 65_535)), &params) else {
                throw ImageCodecError(.encodingFailed, stage: .encoding, format: .webp, codec: WebPLibrary.codecName,
                                      message: "cannot encode an animation of \(canvas) as WebP (sizes are 1…16383)")
            }
            self.encoder = OwnedAnimEncoder(made)
            self.canvas = canvas
        }

        mutating func append(_ bitmap: Bitmap, duration: Double) throws {
            guard bitmap.width == canvas.width, bitmap.height == canvas.height else {
                throw ImageCodecError(.encodingFailed, stage: .encoding, format: .webp, codec: WebPLibrary.codecName,
                                      message: "animated WebP frame \(written) is \(bitmap.width)×\(bitmap.height), the canvas \(canvas): frames must be whole canvases")
            }
            let frame = ImageEncoders.WebP.prepared(bitmap).converted(to: .rgba8)
            let timestamp = milliseconds
            let status = frame.withUnsafeBytes { pixels in
                nukewebp_anim_encoder_add(encoder.pointer, pixels.bindMemory(to: UInt8.self).baseAddress!, frame.bytesPerRow, Int32(clamping: timestamp))
            }
            guard status == NUKE_STATUS_OK else { throw failure("adding frame \(written)") }
            // At most 2³¹ − 1 ms in all: libwebp's timestamps are 32-bit.
            milliseconds = min(milliseconds + Int((AnimationFrameInfo.storableDuration(duration) * 1000).rounded()), Int(Int32.max))
            written += 1
        }

        func finish() throws -> Data {
            var output: UnsafeMutablePointer<UInt8>?
            var size = 0
            let status = nukewebp_anim_encoder_finish(encoder.pointer, Int32(milliseconds), &output, &size)
            guard status == NUKE_STATUS_OK, let output else {
                nukewebp_anim_output_free(output)
                throw failure("assembling the animation")
            }
            // The file as the writer grew it, not a copy: an animation's output is held once.
            return Data(bytesNoCopy: output, count: size, deallocator: .custom { bytes, _ in nukewebp_anim_output_free(bytes) })
        }

        /// Writes the part of the file no later frame changes (all but the last frame's chunk and
        /// the header's size and flags) to `stream`, and drops it.
        func writeSettled(to stream: inout some ImageOutputStream) throws {
            var bytes: UnsafePointer<UInt8>?
            let count = nukewebp_anim_encoder_settled(encoder.pointer, &bytes)
            guard count > 0, let bytes else { return }
            try stream.write(UnsafeRawBufferPointer(start: bytes, count: count))
            nukewebp_anim_encoder_take(encoder.pointer, count)
        }

        /// Ends the animation: writes the rest of the file to `stream`, then the finished header
        /// over the file's first bytes, at `origin`.
        func finish(to stream: inout some SeekableImageOutputStream, origin: Int) throws {
            let rest = try finish()
            try rest.withUnsafeBytes { try stream.write($0) }
            var size = 0
            let header = nukewebp_anim_encoder_header(encoder.pointer, &size)
            try stream.overwrite(UnsafeRawBufferPointer(start: header, count: size), at: origin)
        }

        private func failure(_ what: String) -> ImageCodecError {
            WebPLibrary.encodingError(status: NUKE_STATUS_INTERNAL, diagnostics: nukewebp_anim_encoder_diagnostics(encoder.pointer).pointee,
                                      context: "animated WebP: \(what)")
        }
    }

    /// The one owner of the shim's animation writer.
    final class OwnedAnimEncoder {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { nukewebp_anim_encoder_destroy(pointer) }
    }
}
