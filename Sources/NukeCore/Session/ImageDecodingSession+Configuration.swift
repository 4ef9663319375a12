#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageDecodingSession {
    /// How a session finds its decoder and paces its previews.
    public struct Configuration: Sendable {
        /// Where the decoder comes from. Default: ``ImageDecoderRegistry/shared``.
        public var registry: ImageDecoderRegistry
        /// Make previews from partial data. When `false`, the session decodes once, at
        /// ``ImageDecodingSession/finish()``. Default `true`.
        public var isProgressive: Bool
        /// The least time between two previews; data arriving sooner waits (coalesced) for
        /// the next one. The final image is never delayed. Default: zero.
        public var minimumPreviewInterval: Duration
        /// Called once with the header, before the decoder is created: returns the size the
        /// image will be displayed at, which decoders that scale while decoding honour.
        public var targetSize: (@Sendable (ImageHeader) -> ImageSize?)?
        /// How the target size is covered.
        public var contentMode: ImageDecodingContext.ContentMode
        /// Keep 16 bits per channel where the file has them.
        public var prefersHighBitDepth: Bool
        /// Bounds for the image; `nil` uses the registry's ``ImageDecoderRegistry/limits``.
        /// The session checks the header's dimensions against them before creating a decoder.
        public var limits: ImageLimits?
        /// Passed to the decoder's context.
        public var userInfo: [String: any Sendable]

        /// Creates a configuration; by default progressive, a preview whenever the decoder has one, at full size, with the registry's limits.
        public init(
            registry: ImageDecoderRegistry = .shared,
            isProgressive: Bool = true,
            minimumPreviewInterval: Duration = .zero,
            targetSize: (@Sendable (ImageHeader) -> ImageSize?)? = nil,
            contentMode: ImageDecodingContext.ContentMode = .aspectFill,
            prefersHighBitDepth: Bool = false,
            limits: ImageLimits? = nil,
            userInfo: [String: any Sendable] = [:]
        ) {
            self.registry = registry
            self.isProgressive = isProgressive
            self.minimumPreviewInterval = minimumPreviewInterval
            self.targetSize = targetSize
            self.contentMode = contentMode
            self.prefersHighBitDepth = prefersHighBitDepth
            self.limits = limits
            self.userInfo = userInfo
        }
    }
}
