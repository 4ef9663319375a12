import Foundation
import NukeCore
import Synchronization

/// What the pipeline returns: the image, the request it answers, and where it came from.
public struct ImageResponse: Sendable {
    /// The image, processed.
    public var container: ImageContainer
    /// The request.
    public var request: ImageRequest
    /// The origin's response head, when the data was loaded now (Nuke's `urlResponse`; `nil`
    /// when a cache or the request's data provider served it).
    public var urlResponse: DataLoadResponse?
    /// Which cache served it, `nil` when it was loaded.
    public var cacheType: CacheType?
    /// How the work went.
    public var metrics: ImageTask.Metrics

    /// The image.
    public var image: PlatformImage { container.image }
    /// `true` for a progressive preview.
    public var isPreview: Bool { container.isPreview }

    /// A response.
    public init(container: ImageContainer, request: ImageRequest, urlResponse: DataLoadResponse? = nil,
                cacheType: CacheType? = nil, metrics: ImageTask.Metrics = ImageTask.Metrics()) {
        self.container = container
        self.request = request
        self.urlResponse = urlResponse
        self.cacheType = cacheType
        self.metrics = metrics
    }

    /// Where a response came from.
    public enum CacheType: Sendable, Hashable {
        /// ``ImageCache``.
        case memory
        /// ``DataCache``: the processed image, encoded.
        case diskProcessed
        /// ``DataCache``: the original data, decoded and processed again.
        case diskOriginal
        /// ``HTTPCache``: a response still fresh, or one the origin confirmed with `304`.
        case http
    }
}

/// A request the pipeline is working on, as Nuke's `ImageTask`: its progress and previews as
/// streams, its events, its state, a priority that can change, cancellation and the final
/// response. Made by ``ImagePipeline/imageTask(with:)-(ImageRequest)``; the work starts at once.
///
/// Each read of ``progress``, ``previews`` or ``events`` is a new stream that starts with what the
/// task has now (the latest progress, the latest preview, the end if it has ended) and then
/// follows it; progress and previews keep only the latest when the reader is slower.
public final class ImageTask: Sendable, Hashable, CustomStringConvertible {
    /// A number unique among the tasks of a process.
    public let taskId: Int64
    /// The request.
    public let request: ImageRequest

    /// Bytes received and expected.
    public struct Progress: Sendable, Hashable {
        /// Bytes received so far.
        public let completed: Int64
        /// `Content-Length`, or 0 when the response does not say.
        public let total: Int64

        /// `completed` over `total`, between 0 and 1 (0 while the total is unknown).
        public var fraction: Float { total == 0 ? 0 : min(1, max(0, Float(completed) / Float(total))) }

        /// A progress.
        public init(completed: Int64, total: Int64) {
            self.completed = completed
            self.total = total
        }
    }

    /// Where the task is.
    public enum State: Sendable, Hashable {
        /// It is running.
        case running
        /// It was cancelled.
        case cancelled
        /// It ended, with a response or an error.
        case completed
    }

    /// What happens to a task, in order: progress and previews, then `.cancelled` or `.finished`
    /// (exactly one of them).
    public enum Event: Sendable {
        /// Bytes arrived.
        case progress(Progress)
        /// A progressive preview was decoded.
        case preview(ImageResponse)
        /// The task was cancelled.
        case cancelled
        /// The task ended with a response or an error (an ``ImagePipeline/Error`` unless a
        /// request's data provider threw its own).
        case finished(Result<ImageResponse, any Error>)
    }

    /// How the work went, stage by stage. Stages that were shared with other requests report the
    /// shared work's times; a cache hit has no later stages.
    public struct Metrics: Sendable, Hashable {
        /// From the call to the response.
        public var total: Duration = .zero
        /// Looking in the disk cache.
        public var dataCacheLookup: Duration?
        /// Loading from the origin, or from the request's data provider.
        public var dataLoading: Duration?
        /// Decoding.
        public var decoding: Duration?
        /// Each processor, in order.
        public var processing: [Duration] = []
        /// Bytes received from the origin for this image (0 when a cache served it).
        public var bytesDownloaded: Int64 = 0
        /// Bytes a resumed download did not fetch again.
        public var bytesResumed: Int64 = 0
        /// `true` when the request joined work another request had started.
        public var isDeduplicated = false

        /// Empty metrics.
        public init() {}
    }

    private struct Record {
        var priority: ImageRequest.Priority
        var progress = Progress(completed: 0, total: 0)
        var latestPreview: ImageResponse?
        var end: Event?
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
    }

    private let record: Mutex<Record>
    private let work = Mutex<Task<ImageResponse, any Error>?>(nil)
    private static let ids = Atomic<Int64>(0)

    /// The pipeline delegate's ear, told of every event.
    private let observer: (@Sendable (ImageTask, Event) -> Void)?

    init(request: ImageRequest, observer: (@Sendable (ImageTask, Event) -> Void)? = nil) {
        self.request = request
        self.observer = observer
        taskId = Self.ids.add(1, ordering: .relaxed).newValue
        record = Mutex(Record(priority: request.priority))
    }

    /// The priority; a change reaches the work still queued (shared work runs at the highest
    /// priority among the requests waiting for it).
    public var priority: ImageRequest.Priority {
        get { record.withLock { $0.priority } }
        set { record.withLock { $0.priority = newValue } }
    }

    /// The latest progress.
    public var currentProgress: Progress { record.withLock { $0.progress } }

    /// Where the task is now.
    public var state: State {
        record.withLock { state in
            switch state.end {
            case nil: .running
            case .cancelled?: .cancelled
            default: .completed
            }
        }
    }

    /// Progress as bytes arrive (the latest wins). Ends with the task.
    public var progress: AsyncStream<Progress> {
        stream(.bufferingNewest(1), replay: { state in state.progress.completed > 0 ? [.progress(state.progress)] : [] }) {
            if case .progress(let progress) = $0 { return progress }
            return nil
        }
    }

    /// Progressive previews as they are decoded (the latest wins). Ends with the task.
    public var previews: AsyncStream<ImageResponse> {
        stream(.bufferingNewest(1), replay: { state in state.latestPreview.map { [.preview($0)] } ?? [] }) {
            if case .preview(let preview) = $0 { return preview }
            return nil
        }
    }

    /// Every event, in order, from now on: a task that has ended gives its end at once.
    public var events: AsyncStream<Event> {
        stream(.unbounded, replay: { _ in [] }) { $0 }
    }

    /// Stops the task: its response throws `CancellationError`; shared work stops when no other
    /// request waits for it (the download ends, a decode stops at its next check).
    public func cancel() {
        work.withLock { $0?.cancel() }
    }

    /// The final response.
    public var response: ImageResponse {
        get async throws {
            guard let task = work.withLock({ $0 }) else { throw CancellationError() }
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// The image.
    public var image: PlatformImage {
        get async throws { try await response.image }
    }

    public var description: String { "ImageTask(id: \(taskId), url: \(request.url?.absoluteString ?? "provider"))" }

    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Reported by the pipeline

    func start(_ body: @escaping @Sendable (ImageTask) async throws -> ImageResponse) {
        work.withLock { slot in
            slot = Task {
                do {
                    let response = try await body(self)
                    self.end(.finished(.success(response)))
                    return response
                } catch {
                    self.end(error is CancellationError ? .cancelled : .finished(.failure(error)))
                    throw error
                }
            }
        }
    }

    func report(_ event: JobEvent) {
        switch event {
        case .progress(let completed, let total):
            let progress = Progress(completed: completed, total: total ?? 0)
            send(.progress(progress)) { $0.progress = progress }
        case .preview(let container):
            let preview = ImageResponse(container: container, request: request)
            send(.preview(preview)) { $0.latestPreview = preview }
        case .chunk:
            break
        }
    }

    /// Tells every stream of `event`, after `update` recorded it.
    private func send(_ event: Event, update: (inout Record) -> Void) {
        // Under the lock, so that every stream sees the events in one order, the end last (a
        // yield does not block).
        let sent = record.withLock { state in
            guard state.end == nil else { return false }
            update(&state)
            for subscriber in state.subscribers.values { subscriber.send(event) }
            return true
        }
        // The delegate's code runs outside the lock: it may read the task.
        if sent { observer?(self, event) }
    }

    private func end(_ event: Event) {
        // Taken out under the lock, so that no later event reaches them; finished outside it
        // (a stream's termination handler takes the lock).
        let subscribers = record.withLock { state -> [Subscriber]? in
            guard state.end == nil else { return nil }
            state.end = event
            state.latestPreview = nil
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        guard let subscribers else { return }
        for subscriber in subscribers {
            subscriber.send(event)
            subscriber.finish()
        }
        observer?(self, event)
    }

    /// A stream of the events `transform` keeps, starting with `replay`'s and the end if the task has ended.
    private func stream<T: Sendable>(_ buffering: AsyncStream<T>.Continuation.BufferingPolicy, replay: (Record) -> [Event],
                                     _ transform: @escaping @Sendable (Event) -> T?) -> AsyncStream<T> {
        let (output, continuation) = AsyncStream<T>.makeStream(bufferingPolicy: buffering)
        let subscriber = Subscriber(continuation: continuation, transform: transform)
        // Under the lock, so that no event overtakes the replayed ones (a yield does not block;
        // the stream has no termination handler yet).
        let id: Int? = record.withLock { state in
            for event in replay(state) { subscriber.send(event) }
            if let end = state.end {
                subscriber.send(end)
                subscriber.finish()
                return nil
            }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = subscriber
            return state.nextSubscriber
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                self?.record.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
        }
        return output
    }
}

/// One reader's stream of a task's events, as it wants them.
private struct Subscriber: Sendable {
    let send: @Sendable (ImageTask.Event) -> Void
    let finish: @Sendable () -> Void

    init<T: Sendable>(continuation: AsyncStream<T>.Continuation, transform: @escaping @Sendable (ImageTask.Event) -> T?) {
        send = { event in if let value = transform(event) { continuation.yield(value) } }
        finish = { continuation.finish() }
    }
}
