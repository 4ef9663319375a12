public import CNukeShim
public import NukeCore

/// The C library a plugin wraps: its facts, and its failures as ``NukeCore/ImageCodecError``s.
///
/// Every plugin has one, named `<Format>Library` in `<Format>Library.swift`
/// (Docs/WritingACodecPlugin.md). The errors it makes name the format and the library with its
/// version, so a message reads "WebP decoding failed (libwebp 1.2.4): …":
///
/// ```swift
/// enum WebPLibrary: CodecLibrary {
///     static let name = "libwebp"
///     static let version = String(cString: nukewebp_version())
///     static let format = ImageType.webp
/// }
///
/// let status = nukewebp_decode(...)
/// guard status == NUKE_STATUS_OK else {
///     throw WebPLibrary.error(status: status, diagnostics: diagnostics, context: "decoding the WebP image")
/// }
/// ```
public protocol CodecLibrary {
    /// The library's name, such as `"libwebp"`.
    static var name: String { get }
    /// Its version as it reports it at run time, such as `"1.2.4"`; empty when a library loaded
    /// on first use cannot be loaded. Reading it may load the library.
    static var version: String { get }
    /// The format its errors name unless told otherwise.
    static var format: ImageType { get }
}

extension CodecLibrary {
    /// The codec errors carry, such as `"libwebp 1.2.4"`, or the name alone without a version.
    public static var codecName: String { version.isEmpty ? name : "\(name) \(version)" }

    /// An error about the library's data, while decoding.
    public static func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        error(code, .decoding, message)
    }

    /// An error about the library's data.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - stage: Where.
    ///   - format: The format, when it is not ``format`` (HEIF's AVIF).
    ///   - message: What the library or the plugin said.
    public static func error(
        _ code: ImageCodecError.Code, _ stage: ImageCodecError.Stage, format: ImageType? = nil, _ message: String
    ) -> ImageCodecError {
        ImageCodecError(code, stage: stage, format: format ?? self.format, codec: codecName, message: message)
    }

    /// An error about data of `format` while decoding.
    public static func error(_ code: ImageCodecError.Code, format: ImageType, _ message: String) -> ImageCodecError {
        error(code, .decoding, format: format, message)
    }

    /// The error for a failing shim status, with the library's own message.
    ///
    /// - Parameters:
    ///   - status: What the shim returned (not OK, need more or paused).
    ///   - diagnostics: The shim's diagnostics, with the library's message.
    ///   - stage: Where: `.decoding` unless told otherwise.
    ///   - format: The format, when it is not ``format``.
    ///   - context: What the plugin was doing, such as `"decoding the WebP image"`; the message
    ///     reads "context: the library's message".
    public static func error(
        status: nuke_status, diagnostics: nuke_diagnostics, stage: ImageCodecError.Stage = .decoding, format: ImageType? = nil,
        context: String? = nil
    ) -> ImageCodecError {
        let code = ImageCodecError.Code(shimStatus: status) ?? .internalFailure
        var message = diagnostics.messageText
        if message.isEmpty { message = code == .cancelled ? "cancelled" : "\(name) failed with status \(status.rawValue)" }
        return error(code, stage, format: format, context.map { "\($0): \(message)" } ?? message)
    }

    /// The error for a failing shim status while encoding: `.encodingFailed`, with the library's
    /// own message.
    ///
    /// - Parameters:
    ///   - status: What the shim returned.
    ///   - diagnostics: The shim's diagnostics, with the library's message.
    ///   - format: The format, when it is not ``format`` (HEIF's AVIF).
    ///   - context: What the plugin was doing; the message reads "context: the library's message".
    public static func encodingError(
        status: nuke_status, diagnostics: nuke_diagnostics, format: ImageType? = nil, context: String? = nil
    ) -> ImageCodecError {
        var message = diagnostics.messageText
        if message.isEmpty { message = "\(name) failed with status \(status.rawValue)" }
        return encodingError(format: format, context.map { "\($0): \(message)" } ?? message)
    }

    /// An `.encodingFailed` error with `message`, about data of `format` when it is not ``format``.
    public static func encodingError(format: ImageType? = nil, _ message: String) -> ImageCodecError {
        error(.encodingFailed, .encoding, format: format, message)
    }

    /// The error a cancelled decode throws.
    public static func cancelled(_ stage: ImageCodecError.Stage = .decoding, format: ImageType? = nil) -> ImageCodecError {
        error(.cancelled, stage, format: format, "cancelled")
    }

    /// Throws ``cancelled(_:format:)`` when `context` asks the decode to stop: between rows,
    /// scans, frames or tiles.
    public static func checkCancellation(_ context: ImageDecodingContext, format: ImageType? = nil) throws(ImageCodecError) {
        if context.isCancelled { throw cancelled(format: format) }
    }
}
