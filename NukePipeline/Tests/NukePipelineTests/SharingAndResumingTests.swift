import Foundation
import NukeCore
import NukeProcessing
import Synchronization
import NukePipelineTestServer
import Testing
@testable import NukePipeline

@Suite struct SharingTests {
    /// 100 concurrent requests for one URL with 3 processor variants: one download, one decode,
    /// and one run of each distinct processor prefix.
    @Test func equivalentRequestsShareEachPieceOfWork() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 0))
            let pipeline = makePipeline()
            let small = ImageProcessors.Resize(width: 16), large = ImageProcessors.Resize(width: 32)
            let variants: [[any ImageProcessing]] = [[small], [large], [small, ImageProcessors.Circle()]]
            let tasks = (0..<100).map { index in
                pipeline.imageTask(with: ImageRequest(url: server.url("/photo.jpg"), processors: variants[index % 3]))
            }
            // Every task waits on the shared work before the body is let through.
            try await eventually("the download started") { server.pausedCount("/photo.jpg") == 1 }
            try await eventually("every task subscribed") { pipeline.processingJobs.subscriberCount == 101 }
            server.resume("/photo.jpg")
            var sizes: [[Int]] = [[], [], []]
            for (index, task) in tasks.enumerated() {
                let image = try await task.image
                sizes[index % 3].append(index % 3 == 2 ? image.width - image.height : image.width)
            }
            // Resized to 16 and 32 wide; the circle is square.
            #expect(sizes[0].allSatisfy { $0 == 16 } && sizes[1].allSatisfy { $0 == 32 } && sizes[2].allSatisfy { $0 == 0 })
            #expect(server.requests(for: "/photo.jpg").count == 1)
            let counts = pipeline.workCounts
            #expect(counts.dataLoads == 1 && counts.decodes == 1 && counts.processings == 3)
            #expect(try await tasks[3].response.metrics.isDeduplicated)
        }
    }

    /// With deduplication off, every request does its own work.
    @Test func noSharingWhenDeduplicationIsOff() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 0))
            let pipeline = makePipeline {
                $0.isDeduplicationEnabled = false
                $0.imageCache = nil
            }
            let tasks = (0..<3).map { _ in pipeline.imageTask(with: ImageRequest(url: server.url("/photo.jpg"))) }
            try await eventually("three downloads started") { server.pausedCount("/photo.jpg") == 3 }
            server.resume("/photo.jpg")
            for task in tasks { #expect(try await task.image.width == 37) }
            #expect(pipeline.workCounts.dataLoads == 3 && pipeline.workCounts.decodes == 3)
        }
    }

    /// Cancelling one of two requests leaves the shared download running; cancelling the last ends it.
    @Test func workIsCancelledOnlyWhenEverySubscriberHas() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 600))
            let pipeline = makePipeline()
            let request = ImageRequest(url: server.url("/photo.jpg"))
            let first = pipeline.imageTask(with: request), second = pipeline.imageTask(with: request)
            try await eventually("both subscribed") { server.pausedCount("/photo.jpg") == 1 && pipeline.decodeJobs.subscriberCount == 2 }
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.response }
            server.resume("/photo.jpg")
            #expect(try await second.image.width == 37)
            #expect(server.requests(for: "/photo.jpg").count == 1)

            // Now both cancel: the download stops, and the pools are empty.
            server.serve("/other.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 600))
            let third = pipeline.imageTask(with: ImageRequest(url: server.url("/other.jpg")))
            let fourth = pipeline.imageTask(with: ImageRequest(url: server.url("/other.jpg")))
            try await eventually("both subscribed") { server.pausedCount("/other.jpg") == 1 && pipeline.decodeJobs.subscriberCount == 2 }
            third.cancel()
            fourth.cancel()
            await #expect(throws: CancellationError.self) { try await fourth.response }
            try await eventually("the shared work ended") { pipeline.dataJobs.subscriberCount == 0 && pipeline.decodeJobs.subscriberCount == 0 }
            server.resume("/other.jpg")
        }
    }

    /// `SharedWork`, the same sharing for work that is not an image request: one run for the
    /// callers of a key, its error reaches each, and it is cancelled when the last caller is.
    @Test func sharedWorkRunsOncePerKeyAndStopsWithItsLastCaller() async throws {
        let work = SharedWork<Int>()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let runs = Counter()
        let callers = (0..<5).map { _ in
            Task {
                try await work.value(for: "k") {
                    runs.increment()
                    for await _ in gate { break }
                    return 42
                }
            }
        }
        try await eventually("five callers") { work.waitingCount == 5 }
        open.yield()
        for caller in callers {
            let (value, _) = try await caller.value
            #expect(value == 42)
        }
        #expect(runs.value == 1 && work.startedCount == 1)
        // Failing work fails every caller.
        struct Broken: Error {}
        await #expect(throws: Broken.self) { try await work.value(for: "k") { throw Broken() } }
        // Cancelled callers: the work sees the cancellation only when both have gone.
        let cancelled = Counter()
        let waiting = (0..<2).map { _ in
            Task {
                try await work.value(for: "slow") {
                    do { try await Task.sleep(for: .seconds(600)) } catch { cancelled.increment() }
                    return 0
                }
            }
        }
        try await eventually("two callers") { work.waitingCount == 2 }
        waiting[0].cancel()
        await #expect(throws: CancellationError.self) { try await waiting[0].value }
        #expect(cancelled.value == 0)
        waiting[1].cancel()
        try await eventually("the work was cancelled") { cancelled.value == 1 }
    }

    /// Shared work runs at the highest priority among its subscribers, read when a slot frees.
    @Test func queuesServeTheHighestPriorityFirst() async throws {
        let queue = WorkQueue(width: 1)
        let order = OrderLog()
        let gate = AsyncStream<Void>.makeStream()
        let blocker = Task { try await queue.run(priority: { .normal }) { for await _ in gate.stream {} } }
        try await eventually("the blocker runs") { queue.runningCount == 1 }
        let raised = PriorityBox(.veryLow)
        var waiters: [Task<Void, any Error>] = []
        for (name, priority) in [("low", ImageRequest.Priority.low), ("high", .high), ("normal", .normal)] {
            waiters.append(Task { try await queue.run(priority: { priority }) { order.append(name) } })
            try await eventually("\(name) queued") { queue.waitingCount == waiters.count }
        }
        waiters.append(Task { try await queue.run(priority: { raised.value }) { order.append("raised") } })
        try await eventually("raised queued") { queue.waitingCount == 4 }
        raised.value = .veryHigh  // changed while it waits
        gate.continuation.finish()
        try await blocker.value
        for waiter in waiters { try await waiter.value }
        #expect(order.names == ["raised", "high", "normal", "low"])
    }
}

final class OrderLog: Sendable {
    private let log = Mutex<[String]>([])
    func append(_ name: String) { log.withLock { $0.append(name) } }
    var names: [String] { log.withLock { $0 } }
}

final class PriorityBox: Sendable {
    private let box: Mutex<ImageRequest.Priority>
    init(_ value: ImageRequest.Priority) { box = .init(value) }
    var value: ImageRequest.Priority {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}

@Suite struct ResumingTests {
    /// A download cut at 90% keeps its bytes; the next request asks for the rest with `Range`
    /// and `If-Range`, and re-fetches only the missing 10%.
    ///
    /// The body (3.5 MB) stays under the loader's read-ahead (``StreamingDelegate/bufferLimit``,
    /// 4 MB): every byte that arrived is kept whatever the load. Past it, the loader holds the
    /// client's reads back, and what AsyncHTTPClient read meanwhile is lost if the connection
    /// ends then (a 10 MB body cut at 9 MB kept 8.6 MB in one CI run of two on a loaded machine).
    @Test func resumesWithRangeAndIfRange() async throws {
        try await withServer { server in
            let body = Fixtures.jpegLike(3_500_000)
            server.serve("/big", .init(data: body, etag: "\"abc\"", cutAfter: 3_150_000))
            let pipeline = makePipeline()
            let request = ImageRequest(url: server.url("/big"))
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: request) }
            let loaded = try await pipeline.bytes(for: request)
            #expect(loaded == body)
            let second = try #require(server.requests(for: "/big").last)
            // Every byte sent before the cut is kept, loopback flooding the client or not (the
            // loader takes AsyncHTTPClient's body parts as they are read; its async body sequence
            // dropped those it held when the connection ended).
            #expect(second.range == "bytes=3150000-")
            #expect(second.ifRange == "\"abc\"")
        }
    }

    @Test func resumesAgainstLastModified() async throws {
        try await withServer { server in
            let body = Fixtures.jpegLike(200_000)
            server.serve("/big", .init(data: body, lastModified: "Tue, 01 Sep 2026 10:00:00 GMT", cutAfter: 150_000))
            let pipeline = makePipeline()
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: ImageRequest(url: server.url("/big"))) }
            let loaded = try await pipeline.bytes(for: ImageRequest(url: server.url("/big")))
            #expect(loaded == body)
            #expect(server.requests(for: "/big").last?.ifRange == "Tue, 01 Sep 2026 10:00:00 GMT")
        }
    }

    /// When the resource changed, the server answers 200 with the whole new body, which replaces the old bytes.
    @Test func startsOverWhenTheValidatorChanged() async throws {
        try await withServer { server in
            server.serve("/big", .init(data: Fixtures.jpegLike(200_000, seed: 1), etag: "\"v1\"", cutAfter: 150_000))
            let pipeline = makePipeline()
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: ImageRequest(url: server.url("/big"))) }
            let changed = Fixtures.jpegLike(180_000, seed: 2)
            server.update("/big") { $0.data = changed; $0.etag = "\"v2\"" }
            let loaded = try await pipeline.bytes(for: ImageRequest(url: server.url("/big")))
            #expect(loaded == changed)
            #expect(server.requests(for: "/big").last?.ifRange == "\"v1\"")
        }
    }

    /// Without a validator there is nothing to resume against: the next request starts over.
    @Test func noValidatorNoResume() async throws {
        try await withServer { server in
            let body = Fixtures.jpegLike(200_000)
            server.serve("/big", .init(data: body, cutAfter: 150_000))
            let pipeline = makePipeline()
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: ImageRequest(url: server.url("/big"))) }
            let loaded = try await pipeline.bytes(for: ImageRequest(url: server.url("/big")))
            #expect(loaded == body)
            #expect(server.requests(for: "/big").last?.range == nil)
        }
    }
}

@Suite struct ProgressiveTests {
    /// A progressive JPEG paused half way: the task's previews deliver an image decoded from the
    /// first half before the rest is sent; then the final image.
    @Test func previewsArriveBeforeTheData() async throws {
        try await withServer { server in
            let jpeg = try Fixtures.progressive
            server.serve("/progressive.jpg", .init(data: jpeg, pauseAfter: jpeg.count * 2 / 3))
            let pipeline = makePipeline { $0.isProgressiveDecodingEnabled = true }
            let task = pipeline.imageTask(with: ImageRequest(url: server.url("/progressive.jpg"), processors: [ImageProcessors.Resize(width: 32)]))
            var previews = task.previews.makeAsyncIterator()
            let preview = try #require(await previews.next())
            #expect(preview.container.isPreview && preview.image.width == 32)
            #expect(server.pausedCount("/progressive.jpg") == 1)
            server.resume("/progressive.jpg")
            let final = try await task.response
            #expect(!final.container.isPreview && final.image.width == 32)
            #expect(task.currentProgress.completed == Int64(jpeg.count) && task.currentProgress.total == Int64(jpeg.count))
        }
    }
}
