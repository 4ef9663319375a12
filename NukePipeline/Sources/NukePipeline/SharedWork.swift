/// Work that concurrent callers with the same key share, on the pipeline's own deduplication:
/// the first caller starts it, later ones join it while it runs, each gets its value (or its
/// error), and it is cancelled only when every caller waiting for it has been cancelled. A key
/// is free again once its work ends: a later caller starts it anew.
///
/// For work that is not an ``ImageRequest``: a thumbnail service coalesces identical requests
/// (the fetch, the decode and the encode of one answer) with it.
///
/// ```swift
/// let thumbnails = SharedWork<Data>()
/// let (data, joined) = try await thumbnails.value(for: path) { try await render(path) }
/// ```
public final class SharedWork<Value: Sendable>: Sendable {
    private let pool = JobPool<Value>()

    /// Shared work.
    public init() {}

    /// The value of the work named `key`: `work` is started unless work for `key` is running,
    /// which the caller joins instead.
    ///
    /// - Returns: the value, and whether the caller joined work already running.
    public func value(for key: String, work: @escaping @Sendable () async throws -> Value) async throws -> (Value, joined: Bool) {
        try await pool.value(for: key, priority: { .normal }, onEvent: { _ in }, work: { _ in try await work() })
    }

    /// Callers waiting for a value now.
    public var waitingCount: Int { pool.subscriberCount }

    /// Pieces of work started since this was made (joins not counted).
    public var startedCount: Int { pool.startedCount }
}
