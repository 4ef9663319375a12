import Foundation
import NukeCore
import Synchronization

/// What the pipeline returns: the image and where it came from.
public struct ImageResponse: Sendable {
    /// The image, processed.
    public var container: ImageContainer
    /// Which cache served it, `nil` when it was loaded.
    public var cacheType: CacheType?
    /// How the work went.
    public var metrics: ImageTask.Metrics

    /// The image.
    public var image: Image { container.image }

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

/// A request the pipeline is working on: its progress, its previews, a priority that can change,
/// cancellation and the final response. Made by ``ImagePipeline/imageTask(with:)``; the work
/// starts at once.
public final class ImageTask: Sendable {
    /// The request.
    public let request: ImageRequest

    /// Bytes received and expected.
    public struct Progress: Sendable, Hashable {
        /// Bytes received so far.
        public var completed: Int64
        /// `Content-Length`, when known.
        public var total: Int64?
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
    }

    private struct State {
        var priority: ImageRequest.Priority
        var progress = Progress(completed: 0, total: nil)
    }

    private let state: Mutex<State>
    private let previewContinuation: AsyncStream<ImageResponse>.Continuation
    private let progressContinuation: AsyncStream<Progress>.Continuation
    private let work = Mutex<Task<ImageResponse, any Error>?>(nil)

    /// Progressive previews as they are decoded; when the consumer is slower than the decoder,
    /// the latest preview wins. Ends with the task.
    public let previews: AsyncStream<ImageResponse>
    /// Progress updates (the latest wins). Ends with the task.
    public let progressUpdates: AsyncStream<Progress>

    init(request: ImageRequest) {
        self.request = request
        state = Mutex(State(priority: request.priority))
        (previews, previewContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (progressUpdates, progressContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The priority; a change reaches the work still queued (shared work runs at the highest
    /// priority among the requests waiting for it).
    public var priority: ImageRequest.Priority {
        get { state.withLock { $0.priority } }
        set { state.withLock { $0.priority = newValue } }
    }

    /// The latest progress.
    public var progress: Progress { state.withLock { $0.progress } }

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
    public var image: Image {
        get async throws { try await response.image }
    }

    // MARK: - Reported by the pipeline

    func start(_ body: @escaping @Sendable (ImageTask) async throws -> ImageResponse) {
        work.withLock { slot in
            slot = Task {
                defer { self.end() }
                return try await body(self)
            }
        }
    }

    func report(_ event: JobEvent) {
        switch event {
        case .progress(let completed, let total):
            let progress = Progress(completed: completed, total: total)
            state.withLock { $0.progress = progress }
            progressContinuation.yield(progress)
        case .preview(let container):
            previewContinuation.yield(ImageResponse(container: container, cacheType: nil, metrics: Metrics()))
        case .chunk:
            break
        }
    }

    private func end() {
        previewContinuation.finish()
        progressContinuation.finish()
    }
}
