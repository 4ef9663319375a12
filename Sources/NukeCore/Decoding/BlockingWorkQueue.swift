#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Runs blocking work (a C decode, a wait on a helper's socket, a wait for a process to end) on
/// threads of its own, at most ``width`` at once, while the calling task suspends.
///
/// Swift's cooperative pool has one thread per processor. A task that runs a long decode on it
/// holds that thread, and every other task in the process (a server's request handlers, a test's
/// waits) queues behind it. Async APIs that do blocking work hand it here instead:
///
/// ```swift
/// let image = try await BlockingWorkQueue.shared.run { try registry.decode(context) }
/// ```
///
/// Jobs start in the order they were submitted. The threads are Dispatch's (a private queue's, not
/// the cooperative pool's); a drain loop ends when no job is waiting.
public final class BlockingWorkQueue: Sendable {
    /// One job per processor at once.
    public static let shared = BlockingWorkQueue(width: max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// How many jobs run at once.
    public let width: Int

    private struct State {
        var jobs: [(@Sendable () -> Void)?] = []
        /// The index of the next job to take (the ones before it were taken and released); the
        /// array is compacted when it empties or when taken slots make up most of it.
        var next = 0
        /// Drain loops running.
        var running = 0
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue

    /// Creates a queue that runs at most `width` jobs at once.
    public init(width: Int, label: String = "NukeCore.BlockingWorkQueue") {
        precondition(width > 0, "a BlockingWorkQueue needs a width of at least 1")
        self.width = width
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Runs `body` on one of the queue's threads and returns its result; the calling task
    /// suspends meanwhile. A cancelled task's job still runs (`body` decides what cancellation
    /// means, for example through an ``ImageDecodingCancellation``).
    public func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            submit {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Queues `job`; starts a drain loop when fewer than ``width`` run.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        let startsLoop = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.running < width else { return false }
            state.running += 1
            return true
        }
        if startsLoop { queue.async { self.drain() } }
    }

    /// Runs waiting jobs until none is left.
    private func drain() {
        while let job = take() { job() }
    }

    private func take() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard state.next < state.jobs.count else {
                state.jobs.removeAll(keepingCapacity: true)
                state.next = 0
                state.running -= 1
                return nil
            }
            let job = state.jobs[state.next]
            state.jobs[state.next] = nil
            state.next += 1
            if state.next >= 1_024, state.next * 2 >= state.jobs.count {
                state.jobs.removeFirst(state.next)
                state.next = 0
            }
            return job
        }
    }
}
