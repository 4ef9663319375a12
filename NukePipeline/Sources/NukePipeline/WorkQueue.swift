import Foundation
import Synchronization

/// A stage's concurrency limit with a priority queue: at most `width` bodies run at once; when
/// one ends, the waiter with the highest priority (read at that moment, so a change made while
/// it waits counts), first come among equals, goes next. A waiter whose task is cancelled
/// leaves the queue at once.
final class WorkQueue: Sendable {
    private struct Waiter {
        var priority: @Sendable () -> ImageRequest.Priority
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var waiters: [Int: Waiter] = [:]
        /// Waiters cancelled before they were queued.
        var cancelledEarly: Set<Int> = []
        var nextID = 0
    }

    /// How many bodies run at once.
    let width: Int
    private let state = Mutex(State())

    /// Bodies running, and waiters queued.
    var runningCount: Int { state.withLock { $0.running } }
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `body` when a slot is free.
    func run<T: Sendable>(priority: @escaping @Sendable () -> ImageRequest.Priority,
                          _ body: () async throws -> T) async throws -> T {
        try await acquire(priority: priority)
        defer { release() }
        try Task.checkCancellation()
        return try await body()
    }

    private func acquire(priority: @escaping @Sendable () -> ImageRequest.Priority) async throws {
        let id: Int? = state.withLock { state in
            if state.running < width && state.waiters.isEmpty {
                state.running += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let early = state.withLock { state in
                    if state.cancelledEarly.remove(id) != nil { return true }
                    state.waiters[id] = Waiter(priority: priority, continuation: continuation)
                    return false
                }
                if early { continuation.resume(throwing: CancellationError()) }
                // A slot may have been freed between the first look and now.
                else { release(taking: false) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelledEarly.insert(id) }
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        state.withLock { _ = $0.cancelledEarly.remove(id) }
    }

    /// Gives up a slot (`taking`), and hands free slots to the most urgent waiters.
    private func release(taking: Bool = true) {
        let next: [Waiter] = state.withLock { state in
            if taking { state.running -= 1 }
            var next: [Waiter] = []
            while state.running < width, !state.waiters.isEmpty {
                let chosen = state.waiters.map { (id: $0.key, priority: $0.value.priority()) }
                    .max { ($0.priority, -$0.id) < ($1.priority, -$1.id) }!.id
                next.append(state.waiters.removeValue(forKey: chosen)!)
                state.running += 1
            }
            return next
        }
        for waiter in next { waiter.continuation.resume() }
    }
}

/// A token bucket: `rate` starts a second on average, bursts of up to `burst` at once (Nuke's
/// rate limiter, which keeps a scrolling list from starting hundreds of requests).
public struct RateLimit: Sendable, Hashable {
    /// Tokens added each second.
    public var rate: Double
    /// The bucket's size.
    public var burst: Int

    /// Creates a limit.
    public init(rate: Double, burst: Int) {
        self.rate = rate
        self.burst = burst
    }
}

final class RateLimiter: Sendable {
    private let limit: RateLimit
    private let clock = ContinuousClock()
    /// Tokens and when they were last counted.
    private let bucket: Mutex<(tokens: Double, at: ContinuousClock.Instant)>

    init(_ limit: RateLimit) {
        self.limit = limit
        bucket = Mutex((Double(limit.burst), clock.now))
    }

    /// Takes a token, waiting for one when the bucket is empty.
    func acquire() async throws {
        while true {
            let wait: Duration? = bucket.withLock { bucket in
                let now = clock.now
                let elapsed = bucket.at.duration(to: now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                bucket.tokens = min(Double(limit.burst), bucket.tokens + seconds * limit.rate)
                bucket.at = now
                if bucket.tokens >= 1 {
                    bucket.tokens -= 1
                    return nil
                }
                return .milliseconds(Int((1 - bucket.tokens) / limit.rate * 1000) + 1)
            }
            guard let wait else { return }
            try await Task.sleep(for: wait)
        }
    }
}
