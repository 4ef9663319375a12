import Foundation
import NukeCore
import Synchronization

extension ImageDecoders {
    /// Decodes PNG with libpng's progressive reader, for complete files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/PNG``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukePNG", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: gray files decode to `.gray8`/`.grayAlpha8`, colour and palette files to
    /// `.rgb8`/`.rgba8`; a `tRNS` chunk adds an alpha channel; 1/2/4-bit gray is scaled to
    /// 8 bits; 16-bit samples are scaled to 8 bits (`(v × 255 + 32895) >> 16`), or kept as
    /// native-endian `UInt16` when the context ``ImageDecodingContext/prefersHighBitDepth``.
    /// Alpha is straight. The image carries the file's ICC profile (`iCCP`), gamma (`gAMA`),
    /// sRGB rendering intent (`sRGB`) and EXIF block (`eXIf`) with its orientation; other
    /// ancillary chunks (text, including zTXt) are skipped without being decompressed.
    ///
    /// Progressive decoding: ``decodePartiallyDownloadedData(_:)`` feeds libpng only the
    /// bytes it has not seen. An interlaced file yields a preview per newly completed Adam7
    /// pass (``ImageContainer/UserInfoKey/scanNumberKey`` = passes complete, 1...7), each
    /// pixel's Adam7 block filled with the pass's pixel; a non-interlaced file yields a
    /// preview whenever new rows arrived (``ImageContainer/UserInfoKey/rowCountKey``), the
    /// rows below being zero. ``decode(_:)`` on the same instance feeds the rest; the result
    /// equals a one-shot decode.
    ///
    /// Errors: data that ends before `IEND` is `.incomplete` (even when every row arrived);
    /// libpng's errors (bad CRC, bad zlib data, bad IHDR) are `.corrupt` with libpng's
    /// message; the ``ImageLimits`` are checked when the first `IDAT` starts, before the
    /// pixels are allocated.
    ///
    /// The corresponding libpng function is `png_process_data`.
    public final class PNG: ImageDecoderRegistering, Sendable {
        private let configuration: PNGDecodingSession.Configuration
        private let session = Mutex<PNGDecodingSession?>(nil)

        /// Creates a decoder.
        ///
        /// - Parameters:
        ///   - prefersHighBitDepth: Keep 16-bit samples instead of scaling them to 8 bits.
        ///   - limits: Bounds checked before the pixels are allocated.
        ///   - cancellation: Checked between 64 KiB slices of input.
        public init(
            prefersHighBitDepth: Bool = false,
            limits: ImageLimits = .default,
            cancellation: ImageDecodingCancellation? = nil
        ) {
            configuration = PNGDecodingSession.Configuration(
                prefersHighBitDepth: prefersHighBitDepth, limits: limits, cancellation: cancellation
            )
        }

        /// Creates a decoder for complete data, or returns `nil` when it is not a PNG.
        public convenience init?(data: Data, context: ImageDecodingContext) {
            guard Self.isPNG(data) else { return nil }
            self.init(prefersHighBitDepth: context.prefersHighBitDepth, limits: context.limits, cancellation: context.cancellation)
        }

        /// Creates a decoder for a download in progress, or returns `nil` when it is not a PNG
        /// (or fewer than 8 bytes arrived).
        public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
            guard Self.isPNG(data) else { return nil }
            self.init(prefersHighBitDepth: context.prefersHighBitDepth, limits: context.limits, cancellation: context.cancellation)
        }

        /// `true` when `data` starts with the PNG signature.
        static func isPNG(_ data: Data) -> Bool {
            data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        }

        /// Decodes the complete image, feeding libpng only what earlier partial calls did not.
        ///
        /// - Throws: ``ImageCodecError``: `.incomplete` when the data ends before `IEND`,
        ///   `.corrupt` with libpng's message, `.limitExceeded`, `.cancelled`.
        ///
        /// The corresponding libpng function is `png_process_data`.
        public func decode(_ data: Data) throws -> ImageContainer {
            try session.withLock { session throws(ImageCodecError) -> ImageContainer in
                let current = try Self.session(&session, for: data, configuration: configuration)
                try current.feed(data, forPreviews: false)
                return try current.finish()
            }
        }

        /// Returns a preview when new rows (or a new Adam7 pass) arrived, otherwise `nil`.
        ///
        /// An interlaced image gets one preview per pass: when one chunk completes several,
        /// calling again with the same data returns the next (``ImageDecodingSession`` does).
        /// Passes that end within the same few bytes of input (the early passes of very small
        /// images, which libpng decodes in one go) share one preview, numbered with the last.
        ///
        /// The corresponding libpng function is `png_process_data`.
        public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
            session.withLock { session -> ImageContainer? in
                guard let current = try? Self.session(&session, for: data, configuration: configuration) else { return nil }
                do {
                    try current.feed(data, forPreviews: true)
                } catch {
                    return nil
                }
                return current.preview()
            }
        }

        /// The session that continues with `data`, or a new one when `data` does not extend
        /// what was fed.
        private static func session(
            _ session: inout PNGDecodingSession?,
            for data: Data,
            configuration: PNGDecodingSession.Configuration
        ) throws(ImageCodecError) -> PNGDecodingSession {
            if let current = session, current.isExtended(by: data) { return current }
            let fresh = try PNGDecodingSession(configuration: configuration)
            session = fresh
            return fresh
        }
    }
}
