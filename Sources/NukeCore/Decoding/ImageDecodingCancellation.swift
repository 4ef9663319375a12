import Synchronization

/// A flag a caller sets to stop a decode; decoders check it between rows or scans and
/// throw ``ImageCodecError`` with code `.cancelled`.
public final class ImageDecodingCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Creates a token that is not cancelled.
    public init() {}

    /// Asks every decode watching this flag to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// `true` once ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
