#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecoders {
    /// Decodes WebP with libwebp: lossy, lossless and alpha, still and animated, for complete
    /// files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/WebP``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeWebP", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: `.rgb8` for images without alpha, `.rgba8` with straight alpha as the file has it
    /// (premultiplied when ``NukeCore/ImageDecodingContext/prefersPremultipliedAlpha`` is set).
    /// The `VP8X` metadata is kept: the ICC profile in ``NukeCore/Image/colorInfo``, EXIF in
    /// ``NukeCore/Image/exif`` with its orientation reported in ``NukeCore/Image/orientation``
    /// (not applied), XMP in ``NukeCore/Image/xmp``.
    ///
    /// Animated files: the first frame, composited on the canvas, is the container's image, and
    /// ``NukeCore/ImageContainer/animation`` decodes the others on demand, blended and disposed
    /// as browsers do, with the `ANIM` loop count (0 = forever) and background colour (reported,
    /// not painted). Frames that lie outside the canvas make the file corrupt, as in libwebp's
    /// demuxer.
    ///
    /// Progressive decoding: one libwebp incremental decoder (`WebPIDecoder`) serves the whole
    /// download and is given only the new bytes; ``decodePartiallyDownloadedData(_:)`` returns a
    /// preview whenever new rows are complete (``NukeCore/ImageContainer/UserInfoKey/rowCountKey``),
    /// or, for an animation, whenever a frame is complete (`scanNumberKey` = frames so far).
    ///
    /// Decode to size (``NukeCore/ImageDecodingContext/targetSize``): the core's resampler, after
    /// libwebp's own scaler has done the integer reduction for opaque images decoded in one call.
    ///
    /// Errors carry libwebp's status (`VP8_STATUS_BITSTREAM_ERROR`...). Limits are checked
    /// against the canvas and, as they arrive, every frame, before any pixel memory exists.
    ///
    /// The corresponding libwebp functions are `WebPDecode`, `WebPIDecode` and `WebPIAppend`.
    public final class WebP: ImageDecoderRegistering, Sendable {
        private let adapter: IncrementalDecoderAdapter

        /// Creates a decoder with default options.
        ///
        /// - Parameters:
        ///   - limits: Bounds checked before pixels are allocated.
        ///   - cancellation: Checked before each frame and between appended chunks.
        public convenience init(limits: ImageLimits = .default, cancellation: ImageDecodingCancellation? = nil) {
            self.init(context: ImageDecodingContext(data: Data(), limits: limits, cancellation: cancellation))
        }

        /// Creates a decoder for the decode request `context` (its limits, cancellation, target
        /// size, allocator and alpha preference).
        public init(context: ImageDecodingContext) {
            adapter = IncrementalDecoderAdapter { WebPIncrementalDecoder(context: context) }
        }

        /// Creates a decoder for complete data, or returns `nil` when it is not a WebP.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard WebPContainer.hasSignature(data) else { return nil }
            self.init(context: context)
        }

        /// Creates a decoder for a download in progress, or returns `nil` when it is not a WebP
        /// (or fewer than 12 bytes arrived).
        public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard WebPContainer.hasSignature(data) else { return nil }
            self.init(context: context)
        }

        /// Reads the size, alpha and animation flag from the first chunk, in pure Swift.
        ///
        /// - Returns: `.parsed`, `.needsMoreData` before the first chunk's header is complete,
        ///   `.unavailable` for data that is not a WebP or whose first chunk is not `VP8 `, `VP8L`
        ///   or `VP8X`.
        public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
            WebPHeaderParser.parse(data)
        }

        /// Decodes the image (the first frame of an animation), feeding only what earlier partial
        /// calls did not.
        ///
        /// - Throws: ``NukeCore/ImageCodecError``: `.incomplete`, `.corrupt`, `.unsupported`,
        ///   `.limitExceeded`, `.cancelled`.
        public func decode(_ data: Data) throws -> ImageContainer {
            try adapter.decode(data)
        }

        /// Returns a preview when new rows (or a new frame) completed, otherwise `nil`.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            adapter.decodePartiallyDownloadedData(data)
        }
    }
}
