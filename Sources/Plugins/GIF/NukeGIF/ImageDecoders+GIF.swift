#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecoders {
    /// Decodes GIF with giflib: still and animated, for complete files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/GIF``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeGIF", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: `.rgba8` with straight alpha, the size of the logical screen. ``decode(_:)``
    /// decodes only the first frame, composited on the screen, as the container's image; an
    /// animated file (more than one image) also gets ``NukeCore/ImageContainer/animation``,
    /// which decodes the other frames on demand, composited as browsers do (disposal to
    /// background clears to transparent; frames larger than or outside the screen are clipped),
    /// with each frame's delay as stored (``NukeCore/AnimationFrameInfo/browserDuration`` gives
    /// what browsers show) and the NETSCAPE2.0 loop count as stored (0 = forever; 1 when the
    /// file has none). Interlaced frames, global and local colour tables and the graphics control
    /// extension's transparency are handled by giflib and the shim.
    ///
    /// Progressive decoding: ``decodePartiallyDownloadedData(_:)`` yields a preview as soon as
    /// the first frame's bytes are all there, then one per further frame (the canvas after it;
    /// ``NukeCore/ImageContainer/UserInfoKey/frameCountKey`` and `scanNumberKey` = frames
    /// complete). Bytes are scanned once and each frame is decoded once.
    ///
    /// Errors: data that ends inside a block is `.incomplete`; a zero-size screen, a bad
    /// signature or a file without images is `.corrupt`; giflib's errors (`D_GIF_ERR_*`) keep its
    /// message. giflib has no limits of its own: the screen size, every frame's size, the frame
    /// count and the bytes compositing needs are checked against ``NukeCore/ImageLimits`` after the
    /// header and before any pixel memory exists. LZW data that ends early inside a complete
    /// frame is shown as far as it goes, as browsers do, and counted as a warning.
    ///
    /// The corresponding giflib functions are `DGifOpen`, `DGifGetImageDesc` and `DGifGetLine`.
    public final class GIF: ImageDecoderRegistering, Sendable {
        private let adapter: IncrementalDecoderAdapter

        /// Creates a decoder.
        ///
        /// - Parameters:
        ///   - limits: Bounds checked before pixels are allocated.
        ///   - cancellation: Checked before each frame and every 64 rows within one.
        public convenience init(limits: ImageLimits = .default, cancellation: ImageDecodingCancellation? = nil) {
            self.init(context: ImageDecodingContext(data: Data(), limits: limits, cancellation: cancellation))
        }

        /// Creates a decoder for the decode request `context` (its limits, cancellation,
        /// strictness and target size).
        public init(context: ImageDecodingContext) {
            adapter = IncrementalDecoderAdapter { GIFIncrementalDecoder(context: context) }
        }

        /// Creates a decoder for complete data, or returns `nil` when it is not a GIF.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard Self.isGIF(data) else { return nil }
            self.init(context: context)
        }

        /// Creates a decoder for a download in progress, or returns `nil` when it is not a GIF
        /// (or fewer than 6 bytes arrived).
        public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard Self.isGIF(data) else { return nil }
            self.init(context: context)
        }

        /// `true` when `data` starts with `GIF87a` or `GIF89a`.
        static func isGIF(_ data: Data) -> Bool {
            data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8))
        }

        /// Reads the logical screen descriptor, in pure Swift.
        ///
        /// - Returns: `.parsed` with the screen size, `.needsMoreData` before 10 bytes,
        ///   `.unavailable` for data that is not a GIF or declares a zero-size screen.
        public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
            let bytes = [UInt8](data.prefix(10))
            let signature = Array(bytes.prefix(6))
            guard Array("GIF87a".utf8).starts(with: signature) || Array("GIF89a".utf8).starts(with: signature) else {
                return .unavailable
            }
            guard bytes.count >= 10 else { return .needsMoreData }
            let width = Int(bytes[6]) | Int(bytes[7]) << 8
            let height = Int(bytes[8]) | Int(bytes[9]) << 8
            guard width > 0, height > 0 else { return .unavailable }
            return .parsed(ImageHeader(type: .gif, width: width, height: height, bitDepth: 8, componentCount: 1))
        }

        /// Decodes the first frame and describes the animation, feeding only what earlier
        /// partial calls did not.
        ///
        /// - Throws: ``NukeCore/ImageCodecError``: `.incomplete`, `.corrupt`, `.limitExceeded`,
        ///   `.cancelled`.
        public func decode(_ data: Data) throws -> ImageContainer {
            try adapter.decode(data)
        }

        /// Returns a preview when a new frame completed, otherwise `nil`.
        ///
        /// When one chunk completes several frames, calling again with the same data returns
        /// the next.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            adapter.decodePartiallyDownloadedData(data)
        }
    }
}
