#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import NukeCore

/// What a decoder plugin tells the kit: which data is its format, the incremental decoder that
/// decodes it, and its header hook. Every plugin has one, named `<Format>Plugin` in
/// `<Format>Plugin.swift` (Docs/WritingACodecPlugin.md); the kit makes its Nuke-style decoder
/// (``PluginImageDecoder``) and its registration (``NukeCore/ImageCodec/init(info:plugin:makeEncoder:)``).
public protocol ImageDecoderPlugin: Sendable {
    /// Whether `data` — a complete file, or the first bytes of a download — is this format;
    /// `context.type` is the format the caller declared, if any.
    static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool

    /// A new incremental decoder for one decode of `context` (its limits, target size,
    /// allocator, cancellation...).
    static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding

    /// Reads the header from the first bytes, before any decoder exists (see
    /// `ImageDecoderRegistering.parseHeader(_:)`). The default: `.unavailable`.
    static func parseHeader(_ data: Data) -> ImageHeader.ParseResult

    /// Whether the Nuke-style decoder accepts a download in progress (Nuke's
    /// `init?(partiallyDownloadedData:context:)`): `false` for a library that needs the whole
    /// file, whose previews could only be `nil`. The default: `true`.
    static var decodesPartialData: Bool { get }

    /// The codec the errors of the core's checks name (`"libjpeg-turbo 3.0"`), as the plugin's
    /// own errors do. The default: `nil`.
    static var codecName: String? { get }
}

extension ImageDecoderPlugin {
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult { .unavailable }

    public static var decodesPartialData: Bool { true }

    public static var codecName: String? { nil }
}

/// The Nuke-style decoder of a plugin: Nuke's `ImageDecoding` over the plugin's incremental
/// decoder, one class for every plugin (`ImageDecoders.JPEG` is
/// `PluginImageDecoder<JPEGPlugin>`).
///
/// Progressive decoding feeds the plugin's decoder only the bytes that are new since the last
/// call; ``decode(_:)`` after partial calls finishes that decode, and otherwise decodes the
/// complete data in one push (`IncrementalDecoderAdapter`).
public final class PluginImageDecoder<Plugin: ImageDecoderPlugin>: ImageDecoderRegistering, Sendable {
    /// The decode request the decoder was made for: limits, target size, cancellation...
    public let context: ImageDecodingContext
    @usableFromInline let adapter: IncrementalDecoderAdapter

    /// Creates a decoder for the decode request `context`; the data in it is not used.
    ///
    /// (Inlinable, as the other initialisers: the registry makes one per dispatch, and a plugin's
    /// module then specialises them for its `Plugin`.)
    @inlinable
    public init(context: ImageDecodingContext) {
        self.context = context
        adapter = IncrementalDecoderAdapter { Plugin.drivenDecoder(context: context, gatesHeader: true) }
    }

    /// Creates a decoder with default options.
    ///
    /// - Parameters:
    ///   - limits: Bounds checked before pixels are allocated.
    ///   - cancellation: Checked between rows, scans, frames or tiles.
    public convenience init(limits: ImageLimits = .default, cancellation: ImageDecodingCancellation? = nil) {
        self.init(context: ImageDecodingContext(data: Data(), limits: limits, cancellation: cancellation))
    }

    /// Creates a decoder for complete data, or returns `nil` when it is not the plugin's format.
    @inlinable
    public convenience init?(data: Data, context: ImageDecodingContext) {
        guard Plugin.accepts(data, context: context) else { return nil }
        self.init(context: context)
    }

    /// Creates a decoder for a download in progress, or returns `nil` when its first bytes are
    /// not the plugin's format or the plugin cannot decode partial data.
    @inlinable
    public convenience init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
        guard Plugin.decodesPartialData, Plugin.accepts(data, context: context) else { return nil }
        self.init(context: context)
    }

    /// The plugin's header hook.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        Plugin.parseHeader(data)
    }

    /// Decodes the image, feeding only what earlier partial calls did not.
    ///
    /// - Throws: ``NukeCore/ImageCodecError``: `.incomplete`, `.corrupt`, `.unsupported`,
    ///   `.limitExceeded`, `.cancelled`...
    public func decode(_ data: Data) throws -> ImageContainer {
        try adapter.decode(data)
    }

    /// Returns a preview when the new bytes completed one (rows, a scan, a frame), else `nil`.
    public func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
        adapter.decodePartiallyDownloadedData(data)
    }
}

extension ImageCodec {
    /// A plugin's registration: its description, its ``ImageDecoderPlugin`` (incremental
    /// decoder, ``PluginImageDecoder`` and header hook) and its encoder.
    @inlinable
    public init<Plugin: ImageDecoderPlugin>(
        info: ImageCodecInfo, plugin: Plugin.Type, makeEncoder: (@Sendable (ImageEncodingOptions) -> any ImageEncoding)? = nil
    ) {
        self.init(
            info: info,
            makeIncrementalDecoder: { context in
                Plugin.accepts(context.data, context: context) ? Plugin.drivenDecoder(context: context, gatesHeader: false) : nil
            },
            makeDecoder: { context in PluginImageDecoder<Plugin>(data: context.data, context: context) },
            parseHeader: { Plugin.parseHeader($0) },
            makeEncoder: makeEncoder
        )
    }
}
