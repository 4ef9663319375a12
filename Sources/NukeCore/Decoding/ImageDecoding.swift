#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes image data: Nuke's decoder protocol, the public face for custom decoders.
///
/// Codec plugins implement ``IncrementalImageDecoding`` (bytes in, events out) and offer this
/// face through ``IncrementalDecoderAdapter``; the registry and `ImageDecodingSession` drive a
/// custom ``ImageDecoding`` through the same contract. One decoder instance serves one decoding session: a progressive download calls
/// ``decodePartiallyDownloadedData(_:)`` with ever longer prefixes of the same data and
/// then ``decode(_:)`` with all of it. `data` only ever grows by appending, so an incremental
/// decoder feeds its C library just the bytes it has not seen and total work stays linear in
/// the file size. Calls on one instance never overlap; a decoder is `Sendable` so the
/// session may move between threads.
public protocol ImageDecoding: Sendable {
    /// Nuke's hint that ``decode(_:)`` is slow enough to run off the caller's queue. Kept for
    /// decoders ported from Nuke; the registry and sessions decode off the caller's thread
    /// already. Default `false`.
    var isAsynchronous: Bool { get }

    /// Decodes the complete image.
    ///
    /// - Parameter data: All of the image's bytes.
    /// - Returns: The decoded image.
    /// - Throws: ``ImageCodecError`` describing the failure: incomplete or corrupt data,
    ///   a limit exceeded, an unsupported feature.
    func decode(_ data: Data) throws -> ImageContainer

    /// Decodes a preview from a partially downloaded image.
    ///
    /// Returns at most one preview per call. When the data completed several progressive
    /// scans (or interlace passes) at once, a decoder returns the first and, on each further
    /// call with the same data, the next, numbering them with
    /// ``ImageContainer/UserInfoKey/scanNumberKey``; then `nil`. `ImageDecodingSession`
    /// asks again while that number grows, so every scan gets its preview.
    ///
    /// - Parameter data: The bytes received so far.
    /// - Returns: A preview (``ImageContainer/isPreview`` is `true`) when enough new data has
    ///   arrived for one, otherwise `nil`. The default returns `nil`.
    func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer?
}

extension ImageDecoding {
    public var isAsynchronous: Bool { false }

    public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? { nil }
}

/// A decoder the registry can create for data it recognises.
public protocol ImageDecoderRegistering: ImageDecoding {
    /// Creates a decoder for complete data, or returns `nil` when the data is not this
    /// decoder's format. Must be cheap: look at the first bytes, do not decode.
    init?(data: Data, context: ImageDecodingContext)

    /// Creates a decoder for a partially downloaded image, or returns `nil` when the decoder
    /// does not decode progressively or the data is not its format. The default returns `nil`.
    init?(partiallyDownloadedData data: Data, context: ImageDecodingContext)

    /// Reads the header from the first bytes of a file of this decoder's format, before any
    /// decoder exists, so `ImageDecodingSession` reports the size (and asks for a target size)
    /// before pixels are allocated. Must be cheap and safe on any input. The default returns
    /// ``ImageHeader/ParseResult/unavailable``.
    static func parseHeader(_ data: Data) -> ImageHeader.ParseResult
}

extension ImageDecoderRegistering {
    public init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
        return nil
    }

    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult { .unavailable }
}
