#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageDecoders {
    /// Decodes HEIC, HEIF and AVIF with libheif (libde265 for HEVC, dav1d or aom for AV1).
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/HEIF``) for HEIC, HEIF and AVIF with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeHEIF", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: the primary image with the file's transformations (`irot`, `imir`, `clap`)
    /// applied once, grid images assembled, `.rgb8`/`.rgba8` (straight alpha), or 16 bits per
    /// sample for 10- and 12-bit files when ``NukeCore/ImageDecodingContext/prefersHighBitDepth``
    /// is set (samples scaled to the full 16-bit range). Because libheif has already rotated the
    /// pixels, ``NukeCore/Image/orientation`` is `.up`; the EXIF block is kept in
    /// ``NukeCore/Image/exif`` but its orientation is not reported, so it is never applied twice.
    /// The ICC profile is in ``NukeCore/Image/colorInfo``; an `nclx` description is in
    /// `userInfo[.heifNCLXKey]`. The brand, bit depth, number of images and thumbnails are in
    /// `userInfo` too (`nuke info` prints them).
    ///
    /// Decode to size uses an embedded thumbnail when one covers the core plan's native floor
    /// (twice the final size, or the final size with `prefersFastScaling`), then the core's
    /// resampler. No progressive decoding: libheif needs the whole file.
    ///
    /// libheif 1.15.1 crashes on some hostile files (DESIGN.md): decode untrusted files through
    /// NukeIsolation, which isolates HEIF by default.
    ///
    /// The corresponding libheif functions are `heif_context_read_from_memory_without_copy` and
    /// `heif_decode_image`.
    public final class HEIF: ImageDecoderRegistering, Sendable {
        private let adapter: IncrementalDecoderAdapter

        public convenience init(limits: ImageLimits = .default, cancellation: ImageDecodingCancellation? = nil) {
            self.init(context: ImageDecodingContext(data: Data(), limits: limits, cancellation: cancellation))
        }

        /// Creates a decoder for the decode request `context`.
        public init(context: ImageDecodingContext) {
            adapter = IncrementalDecoderAdapter { HEIFDecoding.incremental(context) }
        }

        /// Creates a decoder for complete data, or returns `nil` when it is not HEIC, HEIF or AVIF.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard Self.isHEIF(data) else { return nil }
            self.init(context: context)
        }

        /// `true` when the core sniffs `data` as HEIC, HEIF or AVIF (its `ftyp` brands).
        static func isHEIF(_ data: Data) -> Bool {
            guard let type = ImageType(data) else { return false }
            return type == .heic || type == .heif || type == .avif
        }

        public func decode(_ data: Data) throws -> ImageContainer {
            try adapter.decode(data)
        }

        /// Always `nil`: libheif has no progressive decoding.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            nil
        }
    }
}
