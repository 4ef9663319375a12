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
    /// The priority prefetches run at.
    public let priority: ImageRequest.Priority
    private let slots: WorkQueue
    /// The prefetches under way by image key, each with a number of its own (so that one that
    /// ends removes itself, not a later prefetch of the same request).
    private let running = Mutex<(tasks: [String: (id: Int, task: Task<Void, Never>)], nextID: Int)>(([:], 0))

    /// A prefetcher; at most `maximumConcurrentRequests` prefetches at once.
    public init(pipeline: ImagePipeline = .shared, destination: Destination = .memoryCache,
                priority: ImageRequest.Priority = .low, maximumConcurrentRequests: Int = 2) {
        self.pipeline = pipeline
        self.destination = destination
        self.priority = priority
        slots = WorkQueue(width: maximumConcurrentRequests)
    }

    /// Requests being prefetched now.
    public var count: Int { running.withLock { $0.tasks.count } }

    /// Starts prefetching `requests`.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests {
            request.priority = priority
            let prefetched = request
            let key = pipeline.workKey(for: request)
            running.withLock { state in
                guard state.tasks[key] == nil else { return }
                state.nextID += 1
                let id = state.nextID
                state.tasks[key] = (id, Task { [self] in await prefetch(prefetched, key: key, id: id) })
            }
        }
    }

    private func prefetch(_ request: ImageRequest, key: String, id: Int) async {
        _ = try? await slots.run(priority: { [priority] in priority }) {
            switch destination {
            case .memoryCache: _ = try await pipeline.image(for: request)
            case .diskCache: _ = try await pipeline.data(for: request)
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
