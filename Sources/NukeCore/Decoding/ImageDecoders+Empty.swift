#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A namespace for decoders NukeCore provides.
public enum ImageDecoders {}

extension ImageDecoders {
    /// A decoder that returns an empty image and attaches the original data.
    ///
    /// Register it for formats an app only stores or forwards (as Nuke does for video).
    public struct Empty: ImageDecoding, Sendable {
        /// Whether the decoder reports itself as progressive (it never produces a preview either way).
        public let isProgressive: Bool
        /// The type the empty containers carry, if any.
        public let type: ImageType?

        /// - Parameters:
        ///   - type: The format to report.
        ///   - isProgressive: When `true`, every partial call returns an empty preview.
        public init(type: ImageType? = nil, isProgressive: Bool = false) {
            self.type = type
            self.isProgressive = isProgressive
        }

        public func decode(_ data: Data) throws -> ImageContainer {
            ImageContainer(image: Image(bitmap: .empty), type: type ?? ImageType(data), data: data)
        }

        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            guard isProgressive else { return nil }
            return ImageContainer(image: Image(bitmap: .empty), type: type ?? ImageType(data), isPreview: true, data: data)
        }
    }
}
