public import CNukeShim
public import NukeCore

extension ImageCodecError.Code {
    /// The code for a failing `nuke_status` returned by a plugin's C shim (`Docs/CShims.md`).
    ///
    /// - Returns: `nil` for the statuses that are not failures (OK, need more, paused) and for
    ///   values outside the convention.
    public init?(shimStatus status: nuke_status) {
        switch status {
        case NUKE_STATUS_INCOMPLETE: self = .incomplete
        case NUKE_STATUS_CORRUPT: self = .corrupt
        case NUKE_STATUS_UNSUPPORTED: self = .unsupported
        case NUKE_STATUS_LIMIT: self = .limitExceeded
        case NUKE_STATUS_INTERNAL: self = .internalFailure
        case NUKE_STATUS_CANCELLED: self = .cancelled
        default: return nil
        }
    }
}

extension nuke_diagnostics {
    /// The library's message for the last failure; empty when it gave none.
    public var messageText: String {
        withUnsafeBytes(of: message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// What the library tolerated (corrupt entropy data, a bad ancillary CRC), or `nil` when it
    /// warned about nothing: for `ImageContainer.warnings` and strict decoding.
    public var warnings: ImageDecodingWarnings? {
        guard warning_count > 0 else { return nil }
        let first = withUnsafeBytes(of: first_warning) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return ImageDecodingWarnings(count: Int(warning_count), first: first)
    }
}
