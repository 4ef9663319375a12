#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Nuke's names, so that decoders and encoders written for Nuke 12 and 13 compile here with at
// most their imports changed (Docs/MigratingFromNuke.md).

/// Nuke's name for an image format: ``ImageType`` (Nuke 13's identifiers).
public typealias AssetType = ImageType

extension ImageType {
    /// MPEG-4 video (Nuke's `AssetType.mp4`).
    public static let mp4: ImageType = "public.mpeg-4"
    /// M4V video (Nuke's `AssetType.m4v`).
    public static let m4v: ImageType = "com.apple.m4v-video"
    /// QuickTime movie (Nuke's `AssetType.mov`).
    public static let mov: ImageType = "com.apple.quicktime-movie"
    /// JPEG 2000.
    public static let jpeg2000: ImageType = "public.jpeg-2000"
}

extension ImageDecoders {
    /// Nuke's default decoder: here, every decoder linked into the app, through
    /// ``ImageDecoderRegistry/shared`` (Nuke's uses the platform's Image I/O).
    ///
    /// ```swift
    /// let container = try ImageDecoders.Default().decode(data)
    /// ```
    public struct Default: ImageDecoderRegistering, Sendable {
        private let context: ImageDecodingContext?
        private let registry: ImageDecoderRegistry

        /// A decoder that decodes with the shared registry and its limits.
        public init() {
            context = nil
            registry = .shared
        }

        /// A decoder for `data` (nil when no registered decoder takes it), with `context`'s options.
        public init?(data: Data, context: ImageDecodingContext) {
            guard ImageDecoderRegistry.shared.decoder(for: context) != nil else { return nil }
            self.context = context
            registry = .shared
        }

        /// A progressive decoder for a download in progress, when a registered decoder takes it.
        public init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard ImageDecoderRegistry.shared.decoder(for: context) != nil else { return nil }
            self.context = context
            registry = .shared
        }

        public func decode(_ data: Data) throws -> ImageContainer {
            guard var context else { return try registry.decode(data) }
            context.data = data
            context.isCompleted = true
            context.type = ImageType(data)
            return try registry.decode(context)
        }
    }
}

/// What Nuke passes to ``ImageEncoding/encode(_:context:)``: here, the container's image and
/// the encoding options (Nuke's also names the request and the URL response).
public struct ImageEncodingContext: Sendable {
    /// The image to encode.
    public var image: Image
    /// The options the encoder is asked to use.
    public var options: ImageEncodingOptions

    /// Creates a context for encoding `image` with `options`.
    public init(image: Image, options: ImageEncodingOptions = ImageEncodingOptions()) {
        self.image = image
        self.options = options
    }
}
