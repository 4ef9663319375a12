import Foundation
import Synchronization

/// Loads images ahead of need, at low priority, into the memory cache (decoded and processed) or
/// the disk cache (the data only): Nuke's `ImagePrefetcher`. Starting a request already being
/// prefetched does nothing; stopping cancels it (work other requests share goes on).
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images go.
    public enum Destination: Sendable {
        /// Decoded and processed, into the pipeline's ``ImageCache`` (and its disk cache, as its policy says).
        case memoryCache
        /// The data only, into the pipeline's ``DataCache``: nothing is decoded.
        case diskCache
    }

    /// The pipeline.
    public let pipeline: ImagePipeline
    /// Where the images go.
    public let destination: Destination
    /// The priority prefetches run at (Nuke's default `.low`); a change reaches the prefetches
    /// still waiting and those running.
    public var priority: ImageRequest.Priority {
        get { settings.withLock { $0.priority } }
        set {
            settings.withLock { $0.priority = newValue }
            let tasks = running.withLock { $0.tasks.values.compactMap { $0.imageTask.imageTask.withLock { $0 } } }
            for task in tasks { task.priority = newValue }
        }
    }

    /// While `true`, no prefetch starts (those running go on): Nuke's `isPaused`, for a scroll
    /// that should have the pipeline to itself.
    public var isPaused: Bool {
        get { settings.withLock { $0.isPaused } }
        set {
            settings.withLock { $0.isPaused = newValue }
            if newValue { gate.close() } else { gate.open() }
        }
    }

    private let settings: Mutex<(priority: ImageRequest.Priority, isPaused: Bool)>
    let gate = Gate()
    private let slots: WorkQueue
    /// The prefetches under way by image key, each with a number of its own (so that one that
    /// ends removes itself, not a later prefetch of the same request).
    private let running = Mutex<(tasks: [String: Prefetch], nextID: Int)>(([:], 0))

    /// A prefetch under way: its number, its task, and the pipeline's task once it has one.
    private struct Prefetch {
        var id: Int
        var task: Task<Void, Never>
        var imageTask: Box
    }

    /// The pipeline's task of a prefetch, set when it starts.
    private final class Box: Sendable {
        let imageTask = Mutex<ImageTask?>(nil)
    }

    /// A prefetcher; at most `maximumConcurrentRequests` prefetches at once.
    public init(pipeline: ImagePipeline = .shared, destination: Destination = .memoryCache,
                priority: ImageRequest.Priority = .low, maximumConcurrentRequests: Int = 2) {
        self.pipeline = pipeline
        self.destination = destination
        settings = Mutex((priority, false))
        slots = WorkQueue(width: maximumConcurrentRequests)
    }

    /// Requests being prefetched now.
    public var count: Int { running.withLock { $0.tasks.count } }

    /// Starts prefetching `requests`.
    public func startPrefetching(with requests: [ImageRequest]) {
        for request in requests {
            let key = pipeline.workKey(for: request)
            running.withLock { state in
                guard state.tasks[key] == nil else { return }
                state.nextID += 1
                let id = state.nextID
                let box = Box()
                state.tasks[key] = Prefetch(id: id, task: Task { [self] in await prefetch(request, key: key, id: id, box: box) }, imageTask: box)
            }
        }
    }

    /// Starts prefetching the images at `urls`.
    public func startPrefetching(with urls: [URL]) {
        startPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Stops prefetching the images at `urls`.
    public func stopPrefetching(with urls: [URL]) {
        stopPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    private func prefetch(_ request: ImageRequest, key: String, id: Int, box: Box) async {
        _ = try? await slots.run(priority: { [self] in priority }) {
            try await gate.wait()
            var request = request
            request.priority = priority
            switch destination {
            case .memoryCache:
                let task = pipeline.imageTask(with: request)
                box.imageTask.withLock { $0 = task }
                _ = try await task.response
            case .diskCache:
                _ = try await pipeline.data(for: request)
            }
        }
        running.withLock { state in
            if state.tasks[key]?.id == id { state.tasks[key] = nil }
        }
    }

    /// Stops prefetching `requests`.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let tasks = running.withLock { running in requests.compactMap { running.tasks.removeValue(forKey: pipeline.workKey(for: $0))?.task } }
        for task in tasks { task.cancel() }
    }

    /// Stops every prefetch.
    public func stopPrefetching() {
        let tasks = running.withLock { running in
            defer { running.tasks.removeAll() }
            return running.tasks.values.map(\.task)
        }
        for task in tasks { task.cancel() }
    }

    deinit {
        stopPrefetching()
    }
}

/// A gate tasks wait at while it is closed; a waiting task that is cancelled leaves at once.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [Int: CheckedContinuation<Void, any Error>], cancelled: Set<Int>, next: Int)>(
        (true, [:], [], 0))

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func close() { state.withLock { $0.isOpen = false } }

    /// Tasks waiting now.
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Returns when the gate is open; throws `CancellationError` when the task is cancelled first.
    func wait() async throws {
        let id: Int? = state.withLock { state in
            guard !state.isOpen else { return nil }
            state.next += 1
            return state.next
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if state.isOpen { return .success(()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil as CheckedContinuation<Void, any Error>?
                }
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
