import Foundation
import NukeCore
import NukeProcessing
import NukePipelineTestServer
import Synchronization
import Testing
@testable import NukePipeline
#if canImport(Glibc)
import Glibc
#endif

/// A container of `width × 1` RGBA pixels: `4 × width` bytes.
func container(width: Int) -> ImageContainer {
    ImageContainer(image: Image(bitmap: Bitmap(width: width, height: 1, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: width * 4))))
}

@Suite struct ImageCacheTests {
    @Test func evictsTheLeastRecentlyUsedPastTheCostLimit() {
        let cache = ImageCache(limits: .init(costLimit: 1000, entryCostLimit: 1))
        cache["a"] = container(width: 100)  // 400 bytes
        cache["b"] = container(width: 100)
        _ = cache["a"]                        // a is now the most recent
        cache["c"] = container(width: 100)   // 1200 > 1000: b goes
        #expect(cache["a"] != nil && cache["b"] == nil && cache["c"] != nil)
        #expect(cache.totalCost == 800 && cache.totalCount == 2)
    }

    @Test func keepsTheCountLimitAndRefusesHugeEntries() {
        let cache = ImageCache(limits: .init(costLimit: 10_000, countLimit: 2, entryCostLimit: 0.1))
        cache["huge"] = container(width: 300)  // 1200 > 10% of 10,000
        #expect(cache["huge"] == nil)
        for key in ["a", "b", "c"] { cache[key] = container(width: 10) }
        #expect(cache.totalCount == 2 && cache["a"] == nil)
        // Lowering a limit trims at once.
        cache.limits.countLimit = 1
        #expect(cache.totalCount == 1 && cache["c"] != nil)
    }

    @Test func expiresEntriesPastTheirTTL() {
        let cache = ImageCache(limits: .init(costLimit: 10_000, ttl: .zero))
        cache["a"] = container(width: 10)
        #expect(cache["a"] == nil && cache.totalCount == 0)
    }

    /// Churn through 10,000 stores never leaves the cache over its cost limit.
    @Test func staysWithinItsCostLimitThroughChurn() {
        let cache = ImageCache(limits: .init(costLimit: 100_000, entryCostLimit: 0.2))
        var peak = 0
        for index in 0..<10_000 {
            cache["k\(index % 700)"] = container(width: 10 + index % 90)
            peak = max(peak, cache.totalCost)
        }
        #expect(peak <= 100_000 && cache.totalCost > 90_000)
    }

    @Test func memoryLimitFromCgroupFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("kubepods/pod1"), withIntermediateDirectories: true)
        try "1073741824\n".write(to: root.appendingPathComponent("kubepods/pod1/memory.max"), atomically: true, encoding: .utf8)
        #expect(MemoryLimit.cgroupLimit(root: root.path, selfCgroup: "0::/kubepods/pod1\n") == 1 << 30)
        try "max\n".write(to: root.appendingPathComponent("kubepods/pod1/memory.max"), atomically: true, encoding: .utf8)
        #expect(MemoryLimit.cgroupLimit(root: root.path, selfCgroup: "0::/kubepods/pod1\n") == nil)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("memory/docker/c1"), withIntermediateDirectories: true)
        try "536870912\n".write(to: root.appendingPathComponent("memory/docker/c1/memory.limit_in_bytes"), atomically: true, encoding: .utf8)
        #expect(MemoryLimit.cgroupLimit(root: root.path, selfCgroup: "12:cpu:/docker/c1\n9:memory:/docker/c1\n") == 512 << 20)
        try "9223372036854771712\n".write(to: root.appendingPathComponent("memory/docker/c1/memory.limit_in_bytes"), atomically: true, encoding: .utf8)
        #expect(MemoryLimit.cgroupLimit(root: root.path, selfCgroup: "9:memory:/docker/c1\n") == nil)
    }

    @Test func defaultCostLimitFollowsTheMemoryLimit() {
        #expect(ImageCache.defaultCostLimit() == Int(MemoryLimit.current / 5))
        #expect(MemoryLimit.current <= Int64(ProcessInfo.processInfo.physicalMemory))
    }
}

@Suite struct DataCacheTests {
    /// A removal is seen at once by reads, though the file goes on the cache's queue: an entry
    /// written before is not read back in between (a source that did not decode was served again
    /// from disk that way, before its unlink ran).
    @Test func aRemovedEntryIsMissedAtOnce() async throws {
        let cache = try DataCache(path: temporaryFolder())
        for round in 0..<50 {
            let key = "entry-\(round)"
            cache.storeData(Data("bytes \(round)".utf8), forKey: key)
            await cache.flush()
            // Keep the queue busy so that the unlink below waits behind other work.
            for index in 0..<20 { cache.storeData(Data(count: 100_000), forKey: "filler-\(round)-\(index)") }
            cache.removeData(forKey: key)
            #expect(cache.data(forKey: key) == nil && !cache.containsData(forKey: key))
            cache.storeData(Data("again".utf8), forKey: key)
            #expect(cache.data(forKey: key) == Data("again".utf8))
        }
        await cache.flush()
    }

    @Test func storesAtomicallyInFilesNamedByTheKeysHash() async throws {
        let folder = temporaryFolder()
        let cache = try DataCache(path: folder)
        cache.storeData(Data("hello".utf8), forKey: "https://example.com/a.jpg")
        // Staged: readable before the write.
        #expect(cache.data(forKey: "https://example.com/a.jpg") == Data("hello".utf8))
        await cache.flush()
        let name = DataCache.fileName(forKey: "https://example.com/a.jpg")
        #expect(name.count == 64)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.sorted() == [DataCache.ledgerName, name])  // no temporary file left
        // A second instance (another process) on the same folder reads it.
        let other = try DataCache(path: folder)
        #expect(other.data(forKey: "https://example.com/a.jpg") == Data("hello".utf8))
        other.removeData(forKey: "https://example.com/a.jpg")
        await other.flush()
        #expect(cache.data(forKey: "https://example.com/a.jpg") == nil)
    }

    /// A sweep deletes the least recently used entries down to the trim ratio, and a crashed
    /// write's temporary file (no writer holds its lock).
    @Test func sweepsTheLeastRecentlyUsed() async throws {
        let folder = temporaryFolder()
        // Written by a cache with room for them all; swept by one limited to 10,000 bytes.
        let writer = try DataCache(path: folder)
        for index in 0..<10 { writer.storeData(Data(count: 1500), forKey: "k\(index)") }
        await writer.flush()
        let cache = try DataCache(path: folder, sizeLimit: 10_000, trimRatio: 0.5)
        // Uses in a known order: k0 oldest … k9 newest (times set, not waited for).
        for index in 0..<10 { setModified(folder.appendingPathComponent(DataCache.fileName(forKey: "k\(index)")).path, secondsAgo: 1000 - index) }
        let torn = folder.appendingPathComponent(".tmp-crashed").path
        #expect(FileManager.default.createFile(atPath: torn, contents: Data(count: 10)))
        setModified(torn, secondsAgo: 60)
        await cache.sweep()
        let left = (0..<10).filter { cache.containsData(forKey: "k\($0)") }
        #expect(left == [7, 8, 9])  // 4,500 bytes ≤ 5,000
        #expect(!FileManager.default.fileExists(atPath: torn))
    }

    /// A killed writer's temporary file goes at the next sweep, not an hour later; a live
    /// writer's (it holds the lock) stays, and counts towards the limit.
    @Test func deadWritersFilesGoAndLiveOnesCount() async throws {
        let folder = temporaryFolder()
        let cache = try DataCache(path: folder, sizeLimit: 10_000, trimRatio: 0.5)
        for index in 0..<4 { cache.storeData(Data(count: 1500), forKey: "k\(index)") }
        await cache.flush()
        for index in 0..<4 { setModified(folder.appendingPathComponent(DataCache.fileName(forKey: "k\(index)")).path, secondsAgo: 1000 - index) }
        let dead = folder.appendingPathComponent(".tmp-dead").path
        let live = folder.appendingPathComponent(".tmp-live").path
        #expect(FileManager.default.createFile(atPath: dead, contents: Data(count: 100_000)))
        #expect(FileManager.default.createFile(atPath: live, contents: Data(count: 5_000)))
        setModified(dead, secondsAgo: 30)
        setModified(live, secondsAgo: 30)
        let writer = open(live, O_RDONLY)
        #expect(writer >= 0 && flock(writer, LOCK_EX) == 0)
        await cache.sweep()
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: live))
        // 6,000 bytes of entries + 5,000 being written > 10,000: entries go down to 5,000 in all.
        #expect((0..<4).filter { cache.containsData(forKey: "k\($0)") } == [])
        close(writer)
        await cache.sweep()
        #expect(!FileManager.default.fileExists(atPath: live))
    }

    /// Two caches on one folder (as two processes: they share only the folder) keep its limit
    /// together: every write adds to the folder's ledger, and the one that passes the limit sweeps.
    /// Each alone would let the folder grow by a tenth of the limit between its own sweeps.
    @Test func aSharedFolderKeepsTheLimitAcrossWriters() async throws {
        let folder = temporaryFolder()
        let limit = 200_000
        let caches = [try DataCache(path: folder, sizeLimit: limit), try DataCache(path: folder, sizeLimit: limit)]
        var largest = 0
        for index in 0..<400 {
            let cache = caches[index % 2]
            cache.storeData(Data(count: 3_000 + index % 7 * 500), forKey: "k\(index)")
            await cache.flush()
            largest = max(largest, cache.totalSize.bytes)
        }
        // A write that would pass the limit sweeps first.
        #expect(largest <= limit)
        #expect(caches[0].totalSize.bytes >= limit / 2)
        caches[1].storeData(Data(count: limit + 1), forKey: "huge")
        await caches[1].flush()
        #expect(!caches[0].containsData(forKey: "huge") && caches[0].totalSize.bytes <= limit)
    }

    @Test func pipelineServesOriginalDataFromDisk() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let folder = temporaryFolder()
            let request = ImageRequest(url: server.url("/photo.jpg"), processors: [ImageProcessors.Resize(width: 16)])
            let first = makePipeline(dataCache: try DataCache(path: folder))
            _ = try await first.response(for: request)
            await first.configuration.dataCache?.flush()
            // A new pipeline (a restarted process): memory is empty, the disk has the data.
            let second = makePipeline(dataCache: try DataCache(path: folder))
            let response = try await second.response(for: request)
            #expect(response.cacheType == .diskOriginal && response.image.width == 16)
            #expect(server.requests(for: "/photo.jpg").count == 1)
            // Cache only: a resource no cache has fails without a request.
            var cacheOnly = ImageRequest(url: server.url("/other.jpg"))
            cacheOnly.options = .returnCacheDataDontLoad
            await #expect { try await second.response(for: cacheOnly) } throws: { error in
                guard case ImagePipeline.Error.dataMissingInCache = error else { return false }
                return true
            }
            #expect(server.requests(for: "/other.jpg").isEmpty)
        }
    }

    @Test func pipelineStoresProcessedImagesEncoded() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let folder = temporaryFolder()
            let request = ImageRequest(url: server.url("/photo.jpg"), processors: [ImageProcessors.Resize(width: 16)])
            let first = makePipeline(dataCache: try DataCache(path: folder), policy: .automatic)
            _ = try await first.response(for: request)
            let cache = try #require(first.configuration.dataCache)
            try await eventually("the encoded thumbnail is stored") { cache.containsData(forKey: first.imageKey(for: request)) }
            await cache.flush()
            #expect(!cache.containsData(forKey: first.originalDataKey(for: request)))  // automatic: processed only
            let second = makePipeline(dataCache: try DataCache(path: folder), policy: .automatic)
            let response = try await second.response(for: request)
            #expect(response.cacheType == .diskProcessed && response.image.width == 16)
            #expect(second.workCounts.decodes == 0 && server.requests(for: "/photo.jpg").count == 1)
        }
    }
}

func setModified(_ path: String, secondsAgo: Int) {
    let when = time(nil) - secondsAgo
    var times = [timespec(tv_sec: when, tv_nsec: 0), timespec(tv_sec: when, tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, 0)
}

@Suite struct PrefetcherTests {
    @Test func prefetchesIntoTheMemoryOrDiskCache() async throws {
        try await withServer { server in
            server.serve("/a.jpg", .init(data: try Fixtures.jpeg))
            server.serve("/b.jpg", .init(data: try Fixtures.jpeg))
            let pipeline = makePipeline(dataCache: try DataCache(path: temporaryFolder()))
            let a = ImageRequest(url: server.url("/a.jpg")), b = ImageRequest(url: server.url("/b.jpg"))
            let toMemory = ImagePrefetcher(pipeline: pipeline)
            toMemory.startPrefetching(with: [a, a])
            try await eventually("a is in memory") { pipeline.cachedImage(for: a) != nil && toMemory.count == 0 }
            let toDisk = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
            toDisk.startPrefetching(with: [b])
            let cache = try #require(pipeline.configuration.dataCache)
            try await eventually("b is on disk") { cache.containsData(forKey: pipeline.originalDataKey(for: b)) && toDisk.count == 0 }
            #expect(pipeline.cachedImage(for: b) == nil)
            #expect(server.requests(for: "/a.jpg").count == 1 && server.requests(for: "/b.jpg").count == 1)
            #expect(try await pipeline.response(for: a).cacheType == .memory)
            #expect(try await pipeline.response(for: b).cacheType == .diskOriginal)
        }
    }

    @Test func stoppingCancelsThePrefetch() async throws {
        try await withServer { server in
            server.serve("/slow.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 100))
            let pipeline = makePipeline()
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            let request = ImageRequest(url: server.url("/slow.jpg"))
            prefetcher.startPrefetching(with: [request])
            try await eventually("the download is under way") { server.pausedCount("/slow.jpg") == 1 }
            prefetcher.stopPrefetching(with: [request])
            #expect(prefetcher.count == 0)
            try await eventually("the shared work ended") { pipeline.dataJobs.subscriberCount == 0 }
            #expect(pipeline.cachedImage(for: request) == nil)
            server.resume("/slow.jpg")
        }
    }
}

/// Without a DataCache, responses are kept as HTTP's caching rules allow.
@Suite struct HTTPCacheTests {
    /// Requests that skip the memory cache, so that each reaches the data stage.
    static func request(_ url: URL) -> ImageRequest {
        ImageRequest(url: url, options: [.disableMemoryCacheReads])
    }

    @Test func freshResponsesAreServedWithoutARequest() async throws {
        try await withServer { server in
            server.serve("/fresh.jpg", .init(data: try Fixtures.jpeg, cacheControl: "public, max-age=600"))
            let pipeline = makePipeline()
            #expect(try await pipeline.response(for: Self.request(server.url("/fresh.jpg"))).cacheType == nil)
            let second = try await pipeline.response(for: Self.request(server.url("/fresh.jpg")))
            #expect(second.cacheType == .http && second.image.width == 37)
            #expect(server.requests(for: "/fresh.jpg").count == 1)
            // Reloading ignores it.
            _ = try await pipeline.response(for: ImageRequest(url: server.url("/fresh.jpg"), options: .reloadIgnoringCachedData))
            #expect(server.requests(for: "/fresh.jpg").count == 2)
        }
    }

    /// `no-cache` with an ETag: kept, but asked about each time; the 304 costs no body.
    @Test func staleResponsesAreRevalidatedWith304() async throws {
        try await withServer { server in
            let jpeg = try Fixtures.jpeg
            server.serve("/etag.jpg", .init(data: jpeg, etag: "\"v1\"", cacheControl: "no-cache"))
            let pipeline = makePipeline()
            _ = try await pipeline.response(for: Self.request(server.url("/etag.jpg")))
            let second = try await pipeline.response(for: Self.request(server.url("/etag.jpg")))
            #expect(second.cacheType == .http && second.metrics.bytesDownloaded == 0 && second.image.width == 37)
            #expect(server.requests(for: "/etag.jpg").map(\.condition) == [nil, "\"v1\""])
            // The resource changed: the origin sends it whole, and that is what is kept next.
            let png = try Fixtures.png
            server.serve("/etag.jpg", .init(data: png, etag: "\"v2\"", cacheControl: "no-cache"))
            let third = try await pipeline.response(for: Self.request(server.url("/etag.jpg")))
            #expect(third.cacheType == nil && third.container.type == .png)
            _ = try await pipeline.response(for: Self.request(server.url("/etag.jpg")))
            #expect(server.requests(for: "/etag.jpg").map(\.condition) == [nil, "\"v1\"", "\"v1\"", "\"v2\""])
            // Last-Modified alone revalidates with If-Modified-Since.
            let date = "Tue, 03 Nov 2026 10:00:00 GMT"
            server.serve("/dated.jpg", .init(data: jpeg, lastModified: date, cacheControl: "max-age=0"))
            _ = try await pipeline.response(for: Self.request(server.url("/dated.jpg")))
            #expect(try await pipeline.response(for: Self.request(server.url("/dated.jpg"))).cacheType == .http)
            #expect(server.requests(for: "/dated.jpg").map(\.condition) == [nil, date])
        }
    }

    @Test func noStoreAndUnvalidatableResponsesAreNotKept() async throws {
        try await withServer { server in
            let jpeg = try Fixtures.jpeg
            server.serve("/private.jpg", .init(data: jpeg, etag: "\"a\"", cacheControl: "no-store"))
            server.serve("/plain.jpg", .init(data: jpeg))
            let pipeline = makePipeline()
            for path in ["/private.jpg", "/plain.jpg"] {
                for _ in 0..<2 { #expect(try await pipeline.response(for: Self.request(server.url(path))).cacheType == nil) }
                #expect(server.requests(for: path).map(\.condition) == [nil, nil])
            }
            #expect(pipeline.configuration.httpCache?.totalSize.count == 0)
        }
    }

    /// With a DataCache, its rules are Nuke's: what it has is served, headers or not.
    @Test func aDataCacheTakesItsPlace() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, etag: "\"x\"", cacheControl: "no-cache"))
            let folder = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let pipeline = makePipeline(dataCache: try DataCache(path: folder))
            _ = try await pipeline.response(for: Self.request(server.url("/photo.jpg")))
            await pipeline.configuration.dataCache?.flush()
            #expect(try await pipeline.response(for: Self.request(server.url("/photo.jpg"))).cacheType == .diskOriginal)
            #expect(server.requests(for: "/photo.jpg").count == 1 && pipeline.configuration.httpCache?.totalSize.count == 0)
        }
    }

    @Test func freshnessFollowsTheRules() throws {
        let now = try #require(HTTPDate.parse("Sat, 28 Nov 2026 12:00:00 GMT"))
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        func lifetime(_ headers: [(name: String, value: String)]) -> (fresh: Bool, kept: Bool, staleLater: Bool) {
            let cache = HTTPCache()
            cache.store(Data([1]), response: DataLoadResponse(statusCode: 200, headers: headers), forKey: "k", requestHeaders: [], now: now)
            let isFresh: (Date) -> Bool = { date in if case .fresh = cache.lookup("k", requestHeaders: [], now: date) { true } else { false } }
            return (isFresh(now), cache.totalSize.count == 1, !isFresh(now.addingTimeInterval(3600)))
        }
        #expect(lifetime([("Cache-Control", "max-age=60")]) == (true, true, true))
        // Age counts against max-age.
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Age", "100")]) == (false, false, true))
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Age", "100"), ("ETag", "\"e\"")]) == (false, true, true))
        #expect(lifetime([("Date", "Sat, 28 Nov 2026 12:00:00 GMT"), ("Expires", "Sat, 28 Nov 2026 12:30:00 GMT")]) == (true, true, true))
        #expect(lifetime([("Expires", "0"), ("ETag", "\"e\"")]) == (false, true, true))
        // A tenth of the time since Last-Modified: ten days ago gives a day.
        let modified = [("Date", "Sat, 28 Nov 2026 12:00:00 GMT"), ("Last-Modified", "Wed, 18 Nov 2026 12:00:00 GMT")]
        #expect(lifetime(modified) == (true, true, false))
        #expect(lifetime([("Vary", "*"), ("Cache-Control", "max-age=60")]) == (false, false, true))
        // Vary: kept for the request header values it was made for.
        let cache = HTTPCache()
        cache.store(Data([1]), response: DataLoadResponse(statusCode: 200, headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept")]),
                    forKey: "k", requestHeaders: [("Accept", "image/webp")], now: now)
        if case .fresh = cache.lookup("k", requestHeaders: [("accept", "image/webp")], now: now) {} else { Issue.record("the same Accept misses") }
        if case .miss = cache.lookup("k", requestHeaders: [("Accept", "image/avif")], now: now) {} else { Issue.record("another Accept hits") }
    }

    @Test func keepsWithinItsByteLimitLeastRecentlyUsedFirst() {
        let cache = HTTPCache(byteLimit: 250)
        let response = DataLoadResponse(statusCode: 200, headers: [("Cache-Control", "max-age=60")])
        for key in ["a", "b"] { cache.store(Data(count: 100), response: response, forKey: key, requestHeaders: []) }
        _ = cache.lookup("a", requestHeaders: [])
        cache.store(Data(count: 100), response: response, forKey: "c", requestHeaders: [])
        #expect(cache.totalSize == (200, 2))
        if case .miss = cache.lookup("b", requestHeaders: []) {} else { Issue.record("b, the least recently used, is kept") }
        if case .fresh = cache.lookup("a", requestHeaders: []) {} else { Issue.record("a was dropped") }
    }
}

@Suite struct PrefetcherPauseTests {
    /// A paused prefetcher starts nothing (its prefetches wait at its gate, with no request made);
    /// unpaused, they run.
    @Test func aPausedPrefetcherStartsNothing() async throws {
        try await withServer { server in
            server.serve("/a.jpg", .init(data: try Fixtures.jpeg))
            server.serve("/b.jpg", .init(data: try Fixtures.jpeg))
            let pipeline = makePipeline()
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            prefetcher.isPaused = true
            let urls = [server.url("/a.jpg"), server.url("/b.jpg")]
            prefetcher.startPrefetching(with: urls)
            try await eventually("both prefetches wait at the gate") { prefetcher.gate.waitingCount == 2 }
            #expect(server.requestCount == 0 && pipeline.workCounts.dataLoads == 0)
            prefetcher.isPaused = false
            try await eventually("both are in memory") { urls.allSatisfy { pipeline.cache[$0] != nil } && prefetcher.count == 0 }
            #expect(server.requestCount == 2)
        }
    }

    /// Every event of a task, in order: progress, then the end; a delegate hears the same.
    @Test func eventsComeInOrderToTheTaskAndTheDelegate() async throws {
        final class Recorder: ImagePipelineDelegate {
            let events = Mutex<[String]>([])
            func imageTask(_ task: ImageTask, didReceiveEvent event: ImageTask.Event, pipeline: ImagePipeline) {
                events.withLock { $0.append(Self.name(event)) }
            }
            static func name(_ event: ImageTask.Event) -> String {
                switch event {
                case .progress: "progress"
                case .preview: "preview"
                case .cancelled: "cancelled"
                case .finished: "finished"
                }
            }
        }
        try await withServer { server in
            server.serve("/big.jpg", .init(data: try Fixtures.progressive, drip: (bytes: 4000, interval: .milliseconds(1))))
            let recorder = Recorder()
            let pipeline = ImagePipeline(configuration: ImagePipeline.Configuration(imageCache: nil), delegate: recorder)
            let task = pipeline.imageTask(with: server.url("/big.jpg"))
            var seen: [String] = []
            for await event in task.events { seen.append(Recorder.name(event)) }
            #expect(seen.last == "finished" && seen.filter { $0 == "progress" }.count >= 2)
            #expect(seen.dropLast().allSatisfy { $0 == "progress" })
            #expect(recorder.events.withLock { Array($0.suffix(seen.count)) } == seen)  // the stream starts when read
            #expect(task.currentProgress.completed == task.currentProgress.total)
            // A stream read after the end gives the end at once.
            var late: [String] = []
            for await event in task.events { late.append(Recorder.name(event)) }
            #expect(late == ["finished"])
        }
    }
}
