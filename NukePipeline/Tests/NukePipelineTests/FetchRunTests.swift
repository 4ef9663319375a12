import Foundation
import NukeCore
import NukeIsolation
import NukeJPEG
import NukePipelineTestServer
import Testing
@testable import NukeFetch
import NukePipeline

@Suite struct FetchRunTests {
    /// `nuke fetch`'s run: a URL listed twice is fetched once, a missing one fails with the
    /// server's status, a cut download is tried again and resumed, and the images are written
    /// decoded to size; a second run with the same disk cache asks the origin for nothing.
    @Test func fetchesToAFolderWithATally() async throws {
        try await withServer { server in
            let jpeg = try Fixtures.jpeg
            server.serve("/photos/a.jpg", .init(data: jpeg, etag: "\"a\""))
            server.serve("/photos/cut.jpg", .init(data: jpeg, etag: "\"c\"", cutAfter: 600))
            let urls = ["/photos/a.jpg", "/photos/a.jpg", "/missing.jpg", "/photos/cut.jpg"].map(server.url)
            let folder = temporaryFolder(), cache = temporaryFolder()
            let first = try await FetchRun(pipeline: makePipeline(dataCache: try DataCache(path: cache)),
                                           options: .init(urls: urls, output: folder, size: 16)).run()
            #expect(first.downloaded == 2 && first.deduplicated == 1 && first.resumed == 1 && first.fromCache == 0)
            #expect(first.failed.map(\.url) == [server.url("/missing.jpg")])
            #expect(first.description.contains("failed \(server.url("/missing.jpg").absoluteString): the server answered 404"))
            #expect(server.requests(for: "/photos/a.jpg").count == 1)
            #expect(server.requests(for: "/photos/cut.jpg").last?.range != nil)
            let written = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(written == ["a.jpg", "cut.jpg"])
            let thumbnail = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: folder.appendingPathComponent("a.jpg")))
            #expect(max(thumbnail.image.width, thumbnail.image.height) == 16)

            // Again, with the same disk cache and a new pipeline: from the cache.
            let pipeline = makePipeline(dataCache: try DataCache(path: cache))
            let second = try await FetchRun(pipeline: pipeline, options: .init(urls: [urls[0], urls[3]], output: folder, size: 16)).run()
            #expect(second.fromCache == 2 && second.downloaded == 0)
            #expect(server.requests(for: "/photos/a.jpg").count == 1)
        }
    }

    @Test func namesFilesSafelyAndUniquely() {
        let urls = ["https://a.example/x/photo.jpg", "https://b.example/y/photo.png", "https://a.example/x/photo.jpg",
                    "https://c.example/../%2e%2e/", "https://d.example/we%20ird$name.webp"].map { URL(string: $0)! }
        #expect(FetchRun.fileNames(for: urls, format: nil) == ["photo", "photo-2", "photo", "image", "we_ird_name"])
    }
}

/// Decodes in NukeIsolation's sandboxed helpers when the pipeline's registry is configured so;
/// the helper is the package's own `nuke-fetch`, started in helper mode.
@Suite struct IsolatedDecodeTests {
    /// The `nuke-fetch` built beside this test bundle.
    static var nukeFetch: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("nuke-fetch").path
    }

    @Test func decodesInHelpersWhenConfigured() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.nukeFetch), "swift test builds nuke-fetch beside the tests")
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let pool = HelperPool(configuration: IsolationConfiguration(helper: .executable(path: Self.nukeFetch), maximumHelpers: 1,
                                                                        spareHelpers: 0, startsHelpersFromZygote: false))
            let registry = ImageDecoderRegistry(codecs: ImageCodecs.linked)
            IsolatedDecoding.install(on: registry, policy: .formats([.jpeg]), pool: pool)
            let pipeline = makePipeline { $0.registry = registry }
            let response = try await pipeline.response(for: ImageRequest(url: server.url("/photo.jpg")))
            // The same pixels as a decode in process, from a helper the pool started.
            let local = try ImageDecoderRegistry(codecs: ImageCodecs.linked).decode(try Fixtures.jpeg)
            #expect(response.image.width == 37 && response.image.frames[0].bitmap.bytes == local.image.frames[0].bitmap.bytes)
            #expect(pool.status.started == 1)
        }
    }
}
