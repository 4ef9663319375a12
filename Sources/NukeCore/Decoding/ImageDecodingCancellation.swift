import Synchronization

/// A flag a caller sets to stop a decode; decoders check it between rows, scans or frames and
/// throw ``ImageCodecError`` with code `.cancelled`. A check made in a cancelled task answers
/// `true` too, so a decode stops when its task is cancelled, whatever the caller's token.
public final class ImageDecodingCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Creates a token that is not cancelled.
    public init() {}

    /// Asks every decode watching this flag to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// `true` once ``cancel()`` was called, or when the task that asks is cancelled.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) || Task.isCancelled }

    /// A token nobody cancels: it answers for the task that asks (``ImageDecodingContext/cancellationToken``).
    public static let taskOnly = ImageDecodingCancellation()
}
