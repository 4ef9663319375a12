import Foundation
import Nuke
import NukePipelineTestServer
import Testing

// Snippets in the style of Nuke 12's documentation (Getting Started, Image Requests, Image
// Pipeline, Caching, Prefetching, Performance), written for this suite, with `import Nuke` and
// nothing else of this project imported: each compiles as a Nuke user writes it, and runs
// against an origin on loopback. What cannot exist on Linux (UIImage, UIKit's collection views,
// URLSession's delegate) is left out; where a line differs from Nuke's, a comment says why.

/// A JPEG of 37 × 23 and a PNG of 160 × 120 at `/image.jpeg` and `/image.png`, with validators.
func withImages(_ body: (TestHTTPServer) async throws -> Void) async throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let server = try await TestHTTPServer()
    server.serve("/image.jpeg", .init(data: try Data(contentsOf: root.appendingPathComponent("Fixtures/jpeg/baseline-420.jpg")),
                                      etag: "\"j\"", contentType: "image/jpeg"))
    server.serve("/image.png", .init(data: try Data(contentsOf: root.appendingPathComponent("Fixtures/png/adam7-rgb-8-160x120.png")),
                                     etag: "\"p\"", contentType: "image/png"))
    do { try await body(server) } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// A pipeline of its own, so that the suites do not share a memory cache.
func makePipeline() -> ImagePipeline {
    ImagePipeline { $0.imageCache = ImageCache() }
}

@Suite(.serialized) struct GettingStarted {
    @Test func loadingAnImage() async throws {
        try await withImages { server in
            let url = server.url("/image.jpeg")
            ImagePipeline.shared = makePipeline()

            let image = try await ImagePipeline.shared.image(for: url)

            #expect(image.width == 37)
        }
    }

    @Test func trackingProgress() async throws {
        try await withImages { server in
            let url = server.url("/image.png")
            var updates: [ImageTask.Progress] = []

            let imageTask = ImagePipeline.shared.imageTask(with: url)
            for await progress in imageTask.progress {
                updates.append(progress)  // Update progress
            }
            let image = try await imageTask.image

            #expect(image.width == 160)
            #expect(updates.last.map { $0.completed == $0.total && $0.fraction == 1 } ?? true)
        }
    }

    @Test func customisingTheRequest() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let request = ImageRequest(
                url: URL(string: server.url("/image.png").absoluteString),
                processors: [.resize(width: 32)],
                priority: .high,
                options: [.reloadIgnoringCachedData]
            )
            let image = try await pipeline.image(for: request)

            #expect(image.width == 32)
        }
    }

    @Test func aPipelineWithADiskCache() async throws {
        let previous = ImagePipeline.shared
        defer { ImagePipeline.shared = previous }

        ImagePipeline.shared = ImagePipeline(configuration: .withDataCache)

        #expect(ImagePipeline.shared.configuration.dataCache != nil)
    }
}

@Suite struct ImageRequests {
    @Test func processors() async throws {
        try await withImages { server in
            let url = server.url("/image.png")
            let request = ImageRequest(url: url, processors: [
                .resize(size: CGSize(width: 44, height: 44)),
                .roundedCorners(radius: 8),
                .gaussianBlur(radius: 2),
                .circle(),
            ])
            let image = try await makePipeline().image(for: request)
            #expect(image.width == 44 && image.height == 44)
        }
    }

    @Test func userInfo() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let url = server.url("/image.png")
            let request = ImageRequest(url: url, userInfo: [.imageIdKey: "http://example.com/image.png",
                                                            .thumbnailKey: ImageRequest.ThumbnailOptions(maxPixelSize: 40)])
            let image = try await pipeline.image(for: request)
            #expect(image.width == 40)
            #expect(request.imageId == "http://example.com/image.png")
        }
    }

    @Test func aMissingURLFails() async throws {
        await #expect(throws: ImagePipeline.Error.self) {
            try await makePipeline().image(for: ImageRequest(url: nil))
        }
    }
}

@Suite struct ImagePipelineSnippets {
    @Test func aPipelineConfiguredInPlace() throws {
        let pipeline = ImagePipeline {
            $0.dataCache = try? DataCache(name: "com.github.kean.Nuke.Tests.\(UUID().uuidString)")
            $0.imageCache = ImageCache()
        }
        #expect(pipeline.configuration.dataCache != nil)
        if let folder = pipeline.configuration.dataCache?.path { try? FileManager.default.removeItem(at: folder) }
    }

    @Test func events() async throws {
        try await withImages { server in
            let task = makePipeline().imageTask(with: server.url("/image.jpeg"))
            var seen: [String] = []
            for await event in task.events {
                switch event {
                case .progress: seen.append("progress")
                case .preview: seen.append("preview")
                case .cancelled: seen.append("cancelled")
                case .finished(let result): seen.append((try? result.get()) != nil ? "finished" : "failed")
                }
            }
            #expect(seen.last == "finished")
            #expect(seen.dropLast().allSatisfy { $0 == "progress" })
            #expect(task.state == .completed)
        }
    }

    @Test func priorityAndCancellation() async throws {
        try await withImages { server in
            let task = makePipeline().imageTask(with: server.url("/image.jpeg"))
            task.priority = .high
            task.cancel()
            _ = try? await task.response
            #expect(task.state == .cancelled || task.state == .completed)
        }
    }

    @Test func loadingData() async throws {
        try await withImages { server in
            let (data, response) = try await makePipeline().data(for: ImageRequest(url: server.url("/image.jpeg")))
            #expect(data.count > 0 && response?.statusCode == 200)
        }
    }
}

@Suite struct Caching {
    @Test func readingFromTheCacheOnly() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let url = server.url("/image.jpeg")
            _ = try await pipeline.image(for: url)

            let request = ImageRequest(url: url, options: [.returnCacheDataDontLoad])
            let response = try await pipeline.imageTask(with: request).response
            let cacheType = response.cacheType  // .memory, .disk, or nil

            #expect(cacheType == .memory)
        }
    }

    @Test func subscripts() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let url = server.url("/image.jpeg")
            let image = try await pipeline.image(for: url)

            #expect(pipeline.cache[url] != nil)
            pipeline.cache[ImageRequest(url: url)] = nil
            #expect(pipeline.cache[url] == nil)
            pipeline.cache[url] = ImageContainer(image: image)
            // The subscript reads the memory cache whatever the request's options say.
            let request = ImageRequest(url: url, options: [.disableMemoryCacheReads])
            #expect(pipeline.cache[request] != nil)
        }
    }

    @Test func theCacheFacade() async throws {
        try await withImages { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-docs-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let pipeline = ImagePipeline {
                $0.imageCache = ImageCache()
                $0.dataCache = try? DataCache(path: folder)
                $0.dataCachePolicy = .storeAll
            }
            let cache = pipeline.cache
            let request = ImageRequest(url: server.url("/image.png"))
            let image = try await pipeline.image(for: request)
            await pipeline.configuration.dataCache?.flush()

            #expect(cache.cachedImage(for: request) != nil)  // From any cache layer
            #expect(cache.cachedImage(for: request, caches: [.memory]) != nil)  // Only memory
            #expect(cache.cachedData(for: request) != nil)
            #expect(cache.containsData(for: request))  // Fast contains check

            // Stores image in the memory cache and stores an encoded image in the disk cache
            let resized = ImageRequest(url: server.url("/image.png"), processors: [.resize(width: 16)])
            cache.storeCachedImage(ImageContainer(image: image), for: resized)
            await pipeline.configuration.dataCache?.flush()
            #expect(cache.cachedImage(for: resized, caches: [.disk])?.image.width == 160)  // Only disk (decodes data)

            cache.removeCachedImage(for: resized)
            #expect(!cache.containsCachedImage(for: resized))
            cache.removeAll()
            await pipeline.configuration.dataCache?.flush()
            #expect(!cache.containsData(for: request))

            #expect(!cache.makeImageCacheKey(for: request).isEmpty && !cache.makeDataCacheKey(for: request).isEmpty)
        }
    }

    /// Invalidating a processed image: the next request processes it again, from the data.
    @Test func removingAProcessedImage() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let request = ImageRequest(url: server.url("/image.png"), processors: [.resize(width: 16)])
            _ = try await pipeline.image(for: request)
            #expect(try await pipeline.imageTask(with: request).response.cacheType == .memory)

            pipeline.cache.removeCachedImage(for: request)

            let again = try await pipeline.imageTask(with: request).response
            #expect(again.cacheType != .memory && again.image.width == 16)
            #expect(pipeline.workCounts.processings == 2)
        }
    }

    final class ImageIdDelegate: ImagePipelineDelegate {
        func cacheKey(for request: ImageRequest, pipeline: ImagePipeline) -> String? {
            request.userInfo["imageId"] as? String
        }
    }

    /// The delegate's key names the data on disk: two URLs with one key are one entry.
    @Test func theDelegatesCacheKey() async throws {
        try await withImages { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-docs-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let pipeline = ImagePipeline(delegate: ImageIdDelegate()) {
                $0.imageCache = nil
                $0.dataCache = try? DataCache(path: folder)
            }
            let first = ImageRequest(url: server.url("/image.jpeg"), userInfo: ["imageId": "photo-1"])
            let second = ImageRequest(url: server.url("/image.jpeg?signature=abc"), userInfo: ["imageId": "photo-1"])
            _ = try await pipeline.image(for: first)
            await pipeline.configuration.dataCache?.flush()
            let response = try await pipeline.imageTask(with: second).response
            #expect(response.cacheType == .diskOriginal)
            #expect(server.requests(for: "/image.jpeg").count == 1)
        }
    }
}

@Suite struct Prefetching {
    @Test func prefetchingURLs() async throws {
        try await withImages { server in
            let pipeline = makePipeline()
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            let urls = [server.url("/image.jpeg"), server.url("/image.png")]

            prefetcher.startPrefetching(with: urls)
            for _ in 0..<4000 where pipeline.cache[urls[1]] == nil || pipeline.cache[urls[0]] == nil {
                try await Task.sleep(for: .milliseconds(5))
            }
            prefetcher.stopPrefetching(with: urls)

            #expect(pipeline.cache[urls[0]] != nil && pipeline.cache[urls[1]] != nil)
        }
    }

    @Test func pausing() {
        let prefetcher = ImagePrefetcher(pipeline: makePipeline())
        // When you pause, the prefetcher will finish outstanding tasks
        // (by default, there are only 2 at a time), and pause the rest.
        prefetcher.isPaused = true
        prefetcher.priority = .veryLow
        #expect(prefetcher.isPaused && prefetcher.priority == .veryLow)
        prefetcher.isPaused = false
    }
}

@Suite struct Performance {
    @Test func tuningTheMemoryCache() {
        let cache = ImageCache()
        cache.costLimit = 1024 * 1024 * 100  // 100 MB
        cache.countLimit = 100
        cache.ttl = .seconds(120)
        cache.entryCostLimit = 0.2
        #expect(cache.limits.costLimit == 100 << 20 && cache.limits.countLimit == 100)
        _ = ImageCache.shared.costLimit
    }

    @Test func flushingTheDiskCache() async throws {
        let dataCache = try DataCache(name: "com.github.kean.Nuke.Tests.\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dataCache.path) }
        dataCache.storeData(Data("hello".utf8), forKey: "a")
        await dataCache.flush()  // async here: Nuke's blocks the calling thread
        #expect(dataCache.url(for: "a").map { FileManager.default.fileExists(atPath: $0.path) } == true)
    }
}
