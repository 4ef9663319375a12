import Foundation
import NukeCore
import NukeProcessing
import NukeSession
import Synchronization

/// Nuke's image pipeline on Linux: a request is served from the memory cache, else from the disk
/// cache, else loaded (resuming a partial download), decoded (progressively when asked) and
/// processed; the results are stored, and equivalent requests share each piece of work — one
/// download, one decode and one run of each processor prefix — cancelled only when every request
/// waiting for it has cancelled.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init(dataCache: try DataCache(path: cacheFolder)))
/// let response = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(size: ImageSize(width: 256, height: 256))))
/// ```
public final class ImagePipeline: Sendable {
    /// The pipeline's configuration.
    public let configuration: Configuration
    /// Decides per request what the configuration decides for all (the loader, the disk cache
    /// key, what is written to disk) and hears every task's events. Kept strongly.
    public let delegate: (any ImagePipelineDelegate)?

    let dataJobs = JobPool<LoadedData>()
    let decodeJobs = JobPool<Traced>()
    let processingJobs = JobPool<Traced>()
    let loadingQueue: WorkQueue
    let decodingQueue: WorkQueue
    let processingQueue: WorkQueue
    let encodingQueue: WorkQueue
    let rateLimiter: RateLimiter?
    let resumableData: ResumableDataStore
    /// The one owner of what a response may be reused for: every cache key and join key.
    let identities = ResponseIdentities()
    private let clock = ContinuousClock()

    /// The pipeline `ImagePipeline.shared` names: by default one with the default configuration
    /// (``HTTPDataLoader``, an ``ImageCache``, an ``HTTPCache``, no disk cache), made on first use;
    /// an app sets its own at start-up, as with Nuke.
    public static var shared: ImagePipeline {
        get {
            sharedPipeline.withLock { shared in
                if let shared { return shared }
                let pipeline = ImagePipeline()
                shared = pipeline
                return pipeline
            }
        }
        set { sharedPipeline.withLock { $0 = newValue } }
    }

    /// A pipeline with `configuration` (and a `delegate` that decides per request).
    public init(configuration: Configuration = Configuration(), delegate: (any ImagePipelineDelegate)? = nil) {
        self.configuration = configuration
        self.delegate = delegate
        loadingQueue = WorkQueue(width: configuration.maximumConcurrentDataLoads)
        decodingQueue = WorkQueue(width: configuration.maximumConcurrentDecodes)
        processingQueue = WorkQueue(width: configuration.maximumConcurrentProcessings)
        encodingQueue = WorkQueue(width: configuration.maximumConcurrentEncodings)
        rateLimiter = configuration.rateLimit.map(RateLimiter.init)
        resumableData = ResumableDataStore(byteLimit: configuration.resumableDataLimit)
    }

    /// A pipeline whose configuration `configure` changes from the defaults:
    /// `ImagePipeline { $0.dataCache = try? DataCache(name: "thumbnails") }`.
    public convenience init(delegate: (any ImagePipelineDelegate)? = nil, _ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        self.init(configuration: configuration, delegate: delegate)
    }

    /// Starts a task for `request`: its previews, progress, priority and cancellation are the
    /// caller's to watch and change.
    public func imageTask(with request: ImageRequest) -> ImageTask {
        var observer: (@Sendable (ImageTask, ImageTask.Event) -> Void)?
        if let delegate {
            observer = { [unowned self] task, event in delegate.imageTask(task, didReceiveEvent: event, pipeline: self) }
        }
        let task = ImageTask(request: request, observer: observer)
        delegate?.imageTaskCreated(task, pipeline: self)
        task.start { [self] task in try await perform(request, task: task) }
        return task
    }

    /// Starts a task for the image at `url`.
    public func imageTask(with url: URL) -> ImageTask {
        imageTask(with: ImageRequest(url: url))
    }

    /// Loads, decodes and processes the image for `request`; cancelling the calling task cancels
    /// it. (Its ``ImageResponse``, with the cache it came from and the metrics, is
    /// `imageTask(with:).response`'s.)
    public func image(for request: ImageRequest) async throws -> PlatformImage {
        try await perform(request, task: nil).image
    }

    /// Loads and decodes the image at `url`.
    public func image(for url: URL) async throws -> PlatformImage {
        try await image(for: ImageRequest(url: url))
    }

    /// The data for `request` (from the disk cache, or loaded), neither decoded nor stored in
    /// memory, and the origin's response head when it was loaded now.
    public func data(for request: ImageRequest) async throws -> (Data, DataLoadResponse?) {
        let loaded = try await loaded(request, priority: { request.priority }, onEvent: { _ in }).value
        // Nothing decodes it here: its length was checked against the response's framing.
        loaded.commit?()
        return (loaded.data, loaded.response)
    }

    /// The image the memory cache holds for `request`.
    public func cachedImage(for request: ImageRequest) -> ImageContainer? {
        configuration.imageCache?[imageKey(for: request)]
    }

    /// The memory and disk cache key of `request`'s final image: the response's identity (its
    /// normalised URL or ``ImageRequest/imageID``, its credentials, the headers it varies on), the
    /// decode options and the processors.
    func imageKey(for request: ImageRequest) -> String { request.imageKey(keys(for: request)) }

    /// The keys of `request`: the response identity's, with the delegate's cache key, if it gives
    /// one, in place of the URL.
    func keys(for request: ImageRequest) -> ResponseKeys {
        identities.keys(for: request, customKey: delegate?.cacheKey(for: request, pipeline: self))
    }

    /// The disk cache key of `request`'s original data.
    func originalDataKey(for request: ImageRequest) -> String { keys(for: request).cache }

    /// A key that names `request`'s work whatever the responses said since (for the prefetcher).
    func workKey(for request: ImageRequest) -> String {
        keys(for: request).join + request.decodeSuffix + request.processorsSuffix(request.processors.count)
    }

    /// Counts of the work started since the pipeline was made (not of requests served by caches
    /// or by joining work already running).
    public var workCounts: (dataLoads: Int, decodes: Int, processings: Int) {
        (dataJobs.startedCount, decodeJobs.startedCount, processingJobs.startedCount)
    }

    // MARK: - The stages

    private func perform(_ request: ImageRequest, task: ImageTask?) async throws -> ImageResponse {
        let start = clock.now
        var request = request
        if !configuration.isDeduplicationEnabled { request.jobSalt = UUID().uuidString }
        let fixed = request.priority
        let priority: @Sendable () -> ImageRequest.Priority = { task?.priority ?? fixed }
        let onEvent: @Sendable (JobEvent) -> Void = { task?.report($0) }
        let key = imageKey(for: request)
        if !request.options.contains(.disableMemoryCacheReads), let hit = configuration.imageCache?[key] {
            var metrics = ImageTask.Metrics()
            metrics.total = start.duration(to: clock.now)
            return ImageResponse(container: hit, request: request, cacheType: .memory, metrics: metrics)
        }
        var (traced, joined) = try await processed(request, count: request.processors.count, priority: priority, onEvent: onEvent)
        traced.metrics.isDeduplicated = traced.metrics.isDeduplicated || joined
        traced.metrics.total = start.duration(to: clock.now)
        // Stored by the job already, unless the job was another request's decode with other processors.
        if let cache = configuration.imageCache, cache[imageKey(for: request)] == nil { storeInMemory(traced.container, for: request) }
        return ImageResponse(container: traced.container, request: request, urlResponse: traced.response, cacheType: traced.cacheType,
                             metrics: traced.metrics)
    }

    /// The image after the first `count` processors: one job per prefix, each built on the
    /// job of the prefix before it.
    private func processed(_ request: ImageRequest, count: Int, priority: @escaping @Sendable () -> ImageRequest.Priority,
                           onEvent: @escaping @Sendable (JobEvent) -> Void) async throws -> (Traced, joined: Bool) {
        guard count > 0 else { return try await decoded(request, priority: priority, onEvent: onEvent) }
        let key = keys(for: request).join + request.decodeSuffix + request.processorsSuffix(count) + request.jobOptionsKey
        return try await processingJobs.value(for: key, priority: priority, onEvent: onEvent) { [self] handle in
            try await processingJob(request, count: count, handle: handle)
        }
    }

    private func processingJob(_ request: ImageRequest, count: Int, handle: JobHandle) async throws -> Traced {
        let isFinal = count == request.processors.count
        if isFinal, let hit = try await encodedImageFromDisk(request, handle: handle) { return hit }
        let processor = request.processors[count - 1]
        let previews = LatestPreview { preview in
            if let processed = try? processor.process(preview, context: ImageProcessingContext(isCompleted: false)) {
                handle.send(.preview(processed))
            }
        }
        let onEvent: @Sendable (JobEvent) -> Void = { event in
            if case .preview(let preview) = event { previews.submit(preview) } else { handle.send(event) }
        }
        var (traced, joined) = try await processed(request, count: count - 1, priority: { handle.priority }, onEvent: onEvent)
        let input = traced.container
        let started = clock.now
        let output = try await processingQueue.run(priority: { handle.priority }) { () async throws -> ImageContainer in
            try await BlockingWorkQueue.shared.run { () throws -> ImageContainer in
                do { return try processor.process(input, context: ImageProcessingContext(isCompleted: true)) } catch {
                    throw Error.processingFailed(processor: processor.identifier, reason: String(describing: error))
                }
            }
        }
        traced.metrics.processing.append(started.duration(to: clock.now))
        traced.metrics.isDeduplicated = traced.metrics.isDeduplicated || joined
        traced.container = output
        if isFinal {
            storeInMemory(output, for: request)
            storeEncodedImage(output, for: request)
        }
        return traced
    }

    /// The decoded image: one job per data and decode options.
    private func decoded(_ request: ImageRequest, priority: @escaping @Sendable () -> ImageRequest.Priority,
                         onEvent: @escaping @Sendable (JobEvent) -> Void) async throws -> (Traced, joined: Bool) {
        let key = keys(for: request).join + request.decodeSuffix + request.jobOptionsKey
        return try await decodeJobs.value(for: key, priority: priority, onEvent: onEvent) { [self] handle in
            try await decodeJob(request, handle: handle)
        }
    }

    private func decodeJob(_ request: ImageRequest, handle: JobHandle) async throws -> Traced {
        let context = decodingContext(for: request)
        let progressive = configuration.isProgressiveDecodingEnabled && !request.options.contains(.disableProgressiveDecoding)
            ? ProgressiveDecode(registry: configuration.registry, context: context, thumbnail: request.thumbnail, handle: handle) : nil
        let onEvent: @Sendable (JobEvent) -> Void = { event in
            if case .chunk(let chunk, let offset) = event { progressive?.append(chunk, at: offset) } else { handle.send(event) }
        }
        var loaded: LoadedData
        let joined: Bool
        do {
            (loaded, joined) = try await self.loaded(request, priority: { handle.priority }, onEvent: onEvent)
        } catch {
            progressive?.cancel()
            throw error
        }
        let started = clock.now
        let container: ImageContainer
        do {
            container = try await decodingQueue.run(priority: { handle.priority }) { [loaded] () async throws -> ImageContainer in
                if let progressive, let final = try await progressive.finish(count: loaded.data.count) { return final }
                return try await decode(decodingContext(for: request, data: loaded.data))
            }
        } catch Error.decodingFailed(let verdict) where loaded.cacheType == .diskOriginal && verdict.isAboutTheBytes {
            // The disk held bytes that do not decode (written by an older version, or torn by
            // something outside the cache): they go, and the origin is asked once more.
            configuration.dataCache?.removeData(forKey: originalDataKey(for: request))
            var again = request
            again.options.insert(.disableDiskCacheReads)
            (loaded, _) = try await self.loaded(again, priority: { handle.priority }, onEvent: { _ in })
            container = try await decodingQueue.run(priority: { handle.priority }) { [loaded] in
                try await decode(decodingContext(for: request, data: loaded.data))
            }
        }
        // Only bytes that decoded are kept.
        loaded.commit?()
        var metrics = loaded.metrics
        metrics.decoding = started.duration(to: clock.now)
        metrics.isDeduplicated = joined
        if request.processors.isEmpty { storeInMemory(container, for: request) }
        return Traced(container: container, metrics: metrics, cacheType: loaded.cacheType, response: loaded.response)
    }

    /// Decodes on a thread of the blocking queue, not the caller's; a decode that stopped for
    /// cancellation throws `CancellationError`, any other failure the decoder's verdict.
    private func decode(_ context: ImageDecodingContext) async throws -> ImageContainer {
        let registry = configuration.registry
        return try await BlockingWorkQueue.shared.run { () throws -> ImageContainer in
            do { return try registry.decode(context) } catch {
                let verdict = ImageCodecError.wrapping(error, stage: .decoding, format: nil, codec: nil)
                if verdict.code == .cancelled { throw CancellationError() }
                throw Error.decodingFailed(verdict)
            }
        }
    }

    /// The decode `request` asks for, of `data` (the format sniffed from it).
    func decodingContext(for request: ImageRequest, data: Data = Data()) -> ImageDecodingContext {
        var context = configuration.registry.makeContext(for: data, isCompleted: true)
        context.limits = request.limits ?? configuration.limits
        if let thumbnail = request.thumbnail {
            context.targetSize = thumbnail.size
            context.contentMode = thumbnail.contentMode
            context.appliesOrientation = thumbnail.appliesOrientation
        }
        return context
    }

    /// The data: one job per resource, from the disk cache or loaded. Loaded data is stored in
    /// the caches only when the caller commits it (``LoadedData/commit``), once it has decoded.
    func loaded(_ request: ImageRequest, priority: @escaping @Sendable () -> ImageRequest.Priority,
                onEvent: @escaping @Sendable (JobEvent) -> Void) async throws -> (value: LoadedData, joined: Bool) {
        let keys = keys(for: request)
        return try await dataJobs.value(for: keys.join + request.jobOptionsKey, priority: priority, onEvent: onEvent) { [self] handle in
            try await loadJob(request, cacheKey: keys.cache, handle: handle)
        }
    }

    private func loadJob(_ request: ImageRequest, cacheKey: String, handle: JobHandle) async throws -> LoadedData {
        var metrics = ImageTask.Metrics()
        if let dataCache = configuration.dataCache, !request.options.contains(.disableDiskCacheReads) {
            let started = clock.now
            let hit = dataCache.data(forKey: cacheKey)
            metrics.dataCacheLookup = started.duration(to: clock.now)
            if let hit { return LoadedData(data: hit, metrics: metrics, cacheType: .diskOriginal) }
        }
        var stale: HTTPCache.Entry?
        if let httpCache = configuration.httpCacheInUse, case .http(let http) = request.resource,
           !request.options.contains(.disableDiskCacheReads) {
            switch httpCache.lookup(cacheKey, requestHeaders: http.headers) {
            case .fresh(let data):
                return LoadedData(data: data, metrics: metrics, cacheType: .http)
            case .stale(let entry) where request.options.contains(.returnCacheDataDontLoad):
                return LoadedData(data: entry.data, metrics: metrics, cacheType: .http)
            case .stale(let entry):
                stale = entry
            case .miss:
                break
            }
        }
        if request.options.contains(.returnCacheDataDontLoad) { throw Error.dataMissingInCache }
        let started = clock.now
        let downloaded = try await loadingQueue.run(priority: { handle.priority }) {
            try await rateLimiter?.acquire()
            return try await download(request, revalidating: stale, handle: handle, metrics: &metrics)
        }
        metrics.dataLoading = started.duration(to: clock.now)
        var loaded = LoadedData(data: downloaded.data, metrics: metrics, cacheType: downloaded.revalidated ? .http : nil,
                                response: downloaded.response)
        let writesDisk = configuration.dataCachePolicy.storesOriginalData(processors: request.processors)
            && !request.options.contains(.disableDiskCacheWrites)
        let dataCache = writesDisk ? configuration.dataCache : nil
        let storeInHTTPCache = downloaded.storeInHTTPCache
        if dataCache != nil || storeInHTTPCache != nil {
            // Stored under the response's keys, now that its `Vary` is known.
            let storeKey = keys(for: request).cache
            let data = downloaded.data
            let willCache = self.willCache(request)
            loaded.commit = { @Sendable in
                if let dataCache, let data = willCache(data, nil) { dataCache.storeData(data, forKey: storeKey) }
                storeInHTTPCache?(storeKey)
            }
        }
        return loaded
    }

    // MARK: - The disk cache of processed images

    private func encodedImageFromDisk(_ request: ImageRequest, handle: JobHandle) async throws -> Traced? {
        guard let dataCache = configuration.dataCache, !request.options.contains(.disableDiskCacheReads),
              configuration.dataCachePolicy.storesEncodedImages(processors: request.processors) else { return nil }
        let started = clock.now
        let key = imageKey(for: request)
        guard let data = dataCache.data(forKey: key) else { return nil }
        var metrics = ImageTask.Metrics()
        metrics.dataCacheLookup = started.duration(to: clock.now)
        var context = configuration.registry.makeContext(for: data, isCompleted: true)
        context.limits = request.limits ?? configuration.limits
        let decodeContext = context
        let container: ImageContainer
        do {
            container = try await decodingQueue.run(priority: { handle.priority }) { try await decode(decodeContext) }
        } catch Error.decodingFailed(let verdict) where verdict.isAboutTheBytes {
            // An entry that does not decode goes; the image is made again.
            dataCache.removeData(forKey: key)
            return nil
        }
        metrics.decoding = metrics.dataCacheLookup.map { started.duration(to: clock.now) - $0 }
        return Traced(container: container, metrics: metrics, cacheType: .diskProcessed)
    }

    /// Stores the final image in the memory cache from inside its job, before the job ends: a
    /// request that comes between the two finds the job or the cache, never neither.
    private func storeInMemory(_ container: ImageContainer, for request: ImageRequest) {
        guard !request.options.contains(.disableMemoryCacheWrites), !container.isPreview else { return }
        configuration.imageCache?[imageKey(for: request)] = container
    }

    /// Encodes the processed image and stores it, off the request's path, as the policy says.
    private func storeEncodedImage(_ container: ImageContainer, for request: ImageRequest) {
        guard let dataCache = configuration.dataCache, !request.options.contains(.disableDiskCacheWrites),
              configuration.dataCachePolicy.storesEncodedImages(processors: request.processors), !container.isPreview else { return }
        let encoders = configuration.encoderRegistry
        let type = encodingType(for: container)
        let key = imageKey(for: request)
        let image = container.image
        let willCache = self.willCache(request)
        Task.detached(priority: .background) { [encodingQueue] in
            try? await encodingQueue.run(priority: { .veryLow }) {
                let data = try await BlockingWorkQueue.shared.run { () throws -> Data in try encoders.encode(image, as: type) }
                if let data = willCache(data, container) { dataCache.storeData(data, forKey: key) }
            }
        }
    }
}

// MARK: - What jobs pass on

/// The one pipeline `ImagePipeline.shared` names, made on first use unless set.
private let sharedPipeline = Mutex<ImagePipeline?>(nil)

extension ImagePipeline {
    /// What goes to the disk cache for `request`: the delegate's say (``ImagePipelineDelegate/willCache(data:image:for:pipeline:)``), else the data.
    func willCache(_ request: ImageRequest) -> @Sendable (Data, ImageContainer?) -> Data? {
        guard let delegate else { return { data, _ in data } }
        return { [unowned self] data, image in delegate.willCache(data: data, image: image, for: request, pipeline: self) }
    }
}

/// Loaded data and how it was loaded.
struct LoadedData: Sendable {
    var data: Data
    var metrics: ImageTask.Metrics
    /// The cache it came from, if any.
    var cacheType: ImageResponse.CacheType?
    /// The origin's response head, when loaded now.
    var response: DataLoadResponse? = nil
    /// Stores freshly loaded data in the caches the request writes to: called once the bytes are
    /// known good (decoded, or for ``ImagePipeline/data(for:)`` their length checked); `nil` for
    /// data a cache served.
    var commit: (@Sendable () -> Void)? = nil
}

/// An image and how it was made.
struct Traced: Sendable {
    var container: ImageContainer
    var metrics: ImageTask.Metrics
    var cacheType: ImageResponse.CacheType?
    var response: DataLoadResponse? = nil
}

extension ImageRequest {
    /// Options that change what a job does, in its key: requests that differ in them never share work.
    var jobOptionsKey: String {
        let relevant = options.intersection([.disableDiskCacheReads, .disableDiskCacheWrites, .disableMemoryCacheWrites,
                                             .returnCacheDataDontLoad, .disableProgressiveDecoding])
        let limitsKey = limits.map { "\nlimits=\($0)" } ?? ""
        let saltKey = jobSalt.map { "\nrequest=" + $0 } ?? ""
        return (relevant.isEmpty ? "" : "\noptions=\(relevant.rawValue)") + limitsKey + saltKey
    }
}

extension ImageCodecError {
    /// `true` when the verdict is on the bytes themselves (corrupt, cut short, no decoder knows
    /// them): bytes a cache holds with such a verdict are of no use to anyone.
    var isAboutTheBytes: Bool { [.corrupt, .incomplete, .noCodec, .unsupported].contains(code) }
}
