#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A namespace for encoders NukeCore provides.
public enum ImageEncoders {}

extension ImageEncoders {
    /// Chooses the format by the image, as Nuke's default encoder does: opaque images as
    /// JPEG, images with alpha as PNG; HEIF when ``isHEIFPreferred`` is set and a HEIF
    /// encoder is registered, else WebP when ``isWebPPreferred`` is set and a WebP encoder is
    /// registered (lossy at ``compressionQuality``, alpha included).
    public struct Default: ImageEncoding, Sendable {
        /// 0…1, passed to lossy encoders. Default 0.8.
        public var compressionQuality: Double
        /// Prefer HEIF for every image when a HEIF encoder is registered.
        public var isHEIFPreferred: Bool
        /// Prefer WebP for every image when a WebP encoder is registered (after HEIF, when both
        /// are preferred and linked).
        public var isWebPPreferred: Bool
        /// Where encoders are looked up. Default: ``ImageEncoderRegistry/shared``.
        public var registry: ImageEncoderRegistry

        /// Creates the default encoder, which looks encoders up in `registry`.
        public init(compressionQuality: Double = 0.8, isHEIFPreferred: Bool = false, isWebPPreferred: Bool = false, registry: ImageEncoderRegistry = .shared) {
            self.compressionQuality = compressionQuality
            self.isHEIFPreferred = isHEIFPreferred
            self.isWebPPreferred = isWebPPreferred
            self.registry = registry
        }

        /// The format `encode(_:)` will write for `image`.
        public func preferredType(for image: Image) -> ImageType {
            if isHEIFPreferred {
                let formats = Set(registry.registeredFormats)
                if formats.contains(.heic) { return .heic }
                if formats.contains(.heif) { return .heif }
            }
            if isWebPPreferred, registry.registeredFormats.contains(.webp) { return .webp }
            return image.hasAlpha ? .png : .jpeg
        }

        /// Encodes `image` in ``preferredType(for:)``.
        ///
        /// - Throws: ``ImageCodecError`` `.noCodec` when that format has no encoder linked.
        public func encode(_ image: Image) throws -> Data {
            try registry.encode(image, as: preferredType(for: image), options: ImageEncodingOptions(quality: compressionQuality))
        }

        /// Encodes `image` in ``preferredType(for:)`` into `stream`, through that encoder's streaming path.
        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            try registry.encode(image, as: preferredType(for: image), options: ImageEncodingOptions(quality: compressionQuality), to: &stream)
        }
    }
}
