import Foundation
import NukeCore
import Synchronization

/// What a running job tells its subscribers before its value.
enum JobEvent: Sendable {
    /// Bytes received so far, and the total when known.
    case progress(completed: Int64, total: Int64?)
    /// A piece of the body, starting at byte `offset` (for progressive decoding).
    case chunk(Data, offset: Int)
    /// A progressive preview.
    case preview(ImageContainer)
}

/// The handle a job's work gets: the priority it runs at (the highest among its subscribers,
/// read each time it is asked, so a change reaches a job waiting in a queue) and a way to tell
/// the subscribers what happens.
struct JobHandle: Sendable {
    fileprivate let priorityOf: @Sendable () -> ImageRequest.Priority
    fileprivate let broadcast: @Sendable (JobEvent) -> Void

    var priority: ImageRequest.Priority { priorityOf() }
    func send(_ event: JobEvent) { broadcast(event) }
}

/// Work shared by every request that needs it: the first subscriber to a key starts the job,
/// later ones join it; each gets the value, the job is cancelled only when every subscriber has
/// cancelled, and it runs at the highest priority among them. A job leaves the pool when it
/// ends, so a later subscriber starts a new one (the caches serve finished work).
final class JobPool<Value: Sendable>: Sendable {
    private struct Subscriber {
        var priority: @Sendable () -> ImageRequest.Priority
        var onEvent: @Sendable (JobEvent) -> Void
        var continuation: CheckedContinuation<Value, any Error>
    }

    private final class Job: Sendable {
        /// The job's task, and whether it was cancelled before the task was made.
        let run = Mutex<(task: Task<Void, Never>?, isCancelled: Bool)>((nil, false))

        func cancel() {
            run.withLock { run in
                run.isCancelled = true
                run.task?.cancel()
            }
        }
    }

    private struct State {
        var jobs: [String: (job: Job, subscribers: [Int: Subscriber])] = [:]
        /// Subscribers waiting for a value; one that leaves this set before it was added to a
        /// job was cancelled first.
        var waiting: Set<Int> = []
        var nextID = 0
        /// How many jobs were started: a test's count of work done.
        var started = 0
    }

    private let state = Mutex(State())

    /// Subscribers of the jobs running now.
    var subscriberCount: Int { state.withLock { $0.jobs.values.reduce(0) { $0 + $1.subscribers.count } } }

    /// Jobs started since the pool was created.
    var startedCount: Int { state.withLock { $0.started } }

    /// The value of the job named `key`, started with `work` unless one is running. The caller's
    /// priority is read when asked (`priority`), and the job's events reach `onEvent`.
    ///
    /// - Returns: the value, and whether the caller joined a job already running.
    func value(for key: String, priority: @escaping @Sendable () -> ImageRequest.Priority,
               onEvent: @escaping @Sendable (JobEvent) -> Void,
               work: @escaping @Sendable (JobHandle) async throws -> Value) async throws -> (Value, joined: Bool) {
        let subscriberID = state.withLock { state -> Int in
            state.nextID += 1
            state.waiting.insert(state.nextID)
            return state.nextID
        }
        let joined = Mutex(false)
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let subscriber = Subscriber(priority: priority, onEvent: onEvent, continuation: continuation)
                let start: Job? = state.withLock { state in
                    guard state.waiting.contains(subscriberID) else {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    if state.jobs[key] != nil {
                        state.jobs[key]!.subscribers[subscriberID] = subscriber
                        joined.withLock { $0 = true }
                        return nil
                    }
                    state.started += 1
                    let job = Job()
                    state.jobs[key] = (job, [subscriberID: subscriber])
                    return job
                }
                if let start { run(start, key: key, work: work) }
            }
        } onCancel: {
            unsubscribe(subscriberID, from: key)
        }
        return (value, joined.withLock { $0 })
    }

    private func run(_ job: Job, key: String, work: @escaping @Sendable (JobHandle) async throws -> Value) {
        let handle = JobHandle(
            priorityOf: { [weak self] in self?.priority(of: key, job: job) ?? .normal },
            broadcast: { [weak self] event in self?.broadcast(event, key: key, job: job) })
        // Made under the job's own lock, so a cancellation finds the task or stops it being made.
        job.run.withLock { run in
            guard !run.isCancelled else { return }
            run.task = Task {
                let result: Result<Value, any Error>
                do { result = .success(try await work(handle)) } catch { result = .failure(error) }
                self.finish(job, key: key, with: result)
            }
        }
    }

    private func priority(of key: String, job: Job) -> ImageRequest.Priority {
        // Read outside the lock: a subscriber's priority may be another job's in this pool.
        let readers = state.withLock { state in
            state.jobs[key].flatMap { $0.job === job ? $0.subscribers.values.map(\.priority) : nil } ?? []
        }
        return readers.map { $0() }.max() ?? .normal
    }

    private func broadcast(_ event: JobEvent, key: String, job: Job) {
        let listeners = state.withLock { state in
            state.jobs[key].flatMap { $0.job === job ? $0.subscribers.values.map(\.onEvent) : nil } ?? []
        }
        for listener in listeners { listener(event) }
    }

    private func finish(_ job: Job, key: String, with result: Result<Value, any Error>) {
        let subscribers = state.withLock { state -> [Subscriber] in
            guard let entry = state.jobs[key], entry.job === job else { return [] }
            state.jobs[key] = nil
            state.waiting.subtract(entry.subscribers.keys)
            return Array(entry.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.resume(with: result) }
    }

    private func unsubscribe(_ subscriberID: Int, from key: String) {
        let (removed, orphan): (Subscriber?, Job?) = state.withLock { state in
            // Not waiting: it has its value already. Waiting but in no job: not added yet.
            guard state.waiting.remove(subscriberID) != nil, var entry = state.jobs[key],
                  let subscriber = entry.subscribers.removeValue(forKey: subscriberID) else { return (nil, nil) }
            if entry.subscribers.isEmpty {
                state.jobs[key] = nil
                return (subscriber, entry.job)
            }
            state.jobs[key] = entry
            return (subscriber, nil)
        }
        removed?.continuation.resume(throwing: CancellationError())
        orphan?.cancel()
    }
}
