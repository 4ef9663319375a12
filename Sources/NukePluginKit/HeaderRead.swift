public import NukeCore

/// What a plugin's own header reader found in the first bytes of a file: its header, a need for
/// more bytes, or why the bytes are not one.
///
/// One reader serves both sides of a plugin: its header hook turns the result into the core's
/// `ImageHeader.ParseResult` (``parseResult(_:)``), and its decoder takes the header
/// or throws the error the result names (``get(_:part:byteCount:)``).
public enum HeaderRead<Header> {
    /// The header.
    case header(Header)
    /// The bytes end before the header does.
    case needsMoreData
    /// The bytes are not a header of the format: `.corrupt`, or `.unsupported` for a variant the
    /// plugin does not read, with the reason.
    case invalid(ImageCodecError.Code, String)

    /// Not a header of the format, for `reason`: corrupt data.
    public static func corrupt(_ reason: String) -> Self { .invalid(.corrupt, reason) }

    /// What the header hook returns: the core's description of the header, `.needsMoreData`, or
    /// `.unavailable` for bytes that are not a header (the decoder then says why).
    public func parseResult(_ describe: (Header) -> ImageHeader?) -> ImageHeader.ParseResult {
        switch self {
        case .header(let header): describe(header).map { .parsed($0) } ?? .unavailable
        case .needsMoreData: .needsMoreData
        case .invalid: .unavailable
        }
    }

    /// The header, for a decoder that has the whole file: the bytes ending before the header
    /// does are `.incomplete`, invalid ones the error their reason names.
    ///
    /// - Parameters:
    ///   - library: The plugin's library, whose errors name its format and codec.
    ///   - part: What the message says the data ends inside: `"header"`, `"directory"`...
    ///   - byteCount: The size of the data, for the message.
    public func get<Library: CodecLibrary>(_ library: Library.Type, part: String = "header", byteCount: Int) throws(ImageCodecError) -> Header {
        switch self {
        case .header(let header): return header
        case .needsMoreData: throw library.error(.incomplete, .header, "the data ends inside the \(part) (\(byteCount) bytes)")
        case .invalid(let code, let reason): throw library.error(code, .header, reason)
        }
    }
}

extension HeaderRead: Sendable where Header: Sendable {}
