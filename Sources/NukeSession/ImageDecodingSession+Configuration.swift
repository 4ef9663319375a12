#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecodingSession {
    /// How a session finds its decoder, what it asks it for and how it paces its previews.
    public struct Configuration: Sendable {
        /// Where the decoder comes from. Default: `ImageDecoderRegistry.shared`.
        public var registry: ImageDecoderRegistry
        /// The decode request every decode of the session is made from: limits, allocator,
        /// strictness, alpha, high bit depth, fast scaling, content mode, `userInfo`. The session
        /// fills in the data, whether it is complete, the target size and its cancellation.
        /// Default: the registry's (`ImageDecoderRegistry.makeContext(for:isCompleted:)`: its
        /// limits and allocator).
        public var context: ImageDecodingContext
        /// Make previews from partial data. When `false`, the session decodes once, at
        /// ``ImageDecodingSession/finish()``. Default `true`.
        public var isProgressive: Bool
        /// The least time between two previews; data arriving sooner waits (coalesced) for
        /// the next one. The final image is never delayed. Default: zero.
        public var minimumPreviewInterval: Duration
        /// Called once with the header, before the decoder is created: returns the size the
        /// image will be displayed at, which decoders that scale while decoding honour.
        public var targetSize: (@Sendable (ImageHeader) -> ImageSize?)?

        /// How the target size is covered (``context``'s).
        public var contentMode: ImageDecodingContext.ContentMode {
            get { context.contentMode }
            set { context.contentMode = newValue }
        }
        /// Keep 16 bits per channel where the file has them (``context``'s).
        public var prefersHighBitDepth: Bool {
            get { context.prefersHighBitDepth }
            set { context.prefersHighBitDepth = newValue }
        }
        /// Bounds for the image (``context``'s). The registry checks the header against them
        /// before the decoder sees the data.
        public var limits: ImageLimits {
            get { context.limits }
            set { context.limits = newValue }
        }
        /// Passed to the decoder (``context``'s).
        public var userInfo: [String: any Sendable] {
            get { context.userInfo }
            set { context.userInfo = newValue }
        }

        /// Creates a configuration; by default progressive, a preview whenever the decoder has
        /// one, at full size, with the registry's decode request (`limits`, when given, replaces
        /// its limits).
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
            var context = registry.makeContext(for: Data(), isCompleted: false)
            context.contentMode = contentMode
            context.prefersHighBitDepth = prefersHighBitDepth
            if let limits { context.limits = limits }
            context.userInfo = userInfo
            self.init(registry: registry, context: context, isProgressive: isProgressive,
                      minimumPreviewInterval: minimumPreviewInterval, targetSize: targetSize)
        }

        /// Creates a configuration whose decodes are made from `context` (its data, completeness
        /// and target size are the session's to set): a strict session, one that allocates from
        /// a pool, one that wants premultiplied alpha.
        public init(
            registry: ImageDecoderRegistry = .shared,
            context: ImageDecodingContext,
            isProgressive: Bool = true,
            minimumPreviewInterval: Duration = .zero,
            targetSize: (@Sendable (ImageHeader) -> ImageSize?)? = nil
        ) {
            self.registry = registry
            self.context = context
            self.isProgressive = isProgressive
            self.minimumPreviewInterval = minimumPreviewInterval
            self.targetSize = targetSize
        }
    }
}
