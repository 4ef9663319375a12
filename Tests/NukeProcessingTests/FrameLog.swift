import Synchronization

/// Counts calls from a processor's closure; a `Mutex` makes it `Sendable`.
final class FrameLog: Sendable {
    private let value = Mutex(0)
    func record() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
