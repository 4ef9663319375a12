import Foundation
import NukeCore
import NukeJPEG
import NukePNG
import NukeProcessing
import Synchronization
import NIOSSL
import NukePipelineTestServer
import Testing
@testable import NukePipeline

/// The repository's fixtures, found from this file.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static func data(_ path: String) throws -> Data { try Data(contentsOf: root.appendingPathComponent(path)) }
    /// 37 × 23 baseline JPEG.
    static var jpeg: Data { get throws { try data("Fixtures/jpeg/baseline-420.jpg") } }
    /// 160 × 120 PNG.
    static var png: Data { get throws { try data("Fixtures/png/adam7-rgb-8-160x120.png") } }
    /// A progressive JPEG, 20 KB.
    static var progressive: Data { get throws { try data("Examples/progressive.jpg") } }
    /// `count` bytes that sniff as JPEG (a JPEG's first bytes, then a pattern): for tests of loading, not decoding.
    static func jpegLike(_ count: Int, seed: UInt8 = 7) -> Data {
        var data = Data([0xFF, 0xD8, 0xFF, 0xE0])
        data.append(contentsOf: (0..<(count - 4)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        return data
    }
}

/// A pipeline for tests: no rate limit (the tests start bursts on purpose), its own caches.
func makePipeline(dataCache: DataCache? = nil, policy: ImagePipeline.DataCachePolicy = .storeOriginalData,
                  _ configure: (inout ImagePipeline.Configuration) -> Void = { _ in }) -> ImagePipeline {
    var configuration = ImagePipeline.Configuration(imageCache: ImageCache(), dataCache: dataCache)
    configuration.rateLimit = nil
    configuration.dataCachePolicy = policy
    configure(&configuration)
    return ImagePipeline(configuration: configuration)
}

func withServer<T>(_ body: (TestHTTPServer) async throws -> T) async throws -> T {
    let server = try await TestHTTPServer()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Waits until `condition` holds: for a state another task reaches, not for time to pass.
func eventually(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<4000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
    guard condition() else { throw ConditionNeverMet(what: what) }
}

struct ConditionNeverMet: Error { var what: String }

func temporaryFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("nuke-pipeline-\(UUID().uuidString)")
}

@Suite struct LoadingTests {
    @Test func loadsDecodesProcessesAndCachesInMemory() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, etag: "\"v1\"", contentType: "image/jpeg"))
            let pipeline = makePipeline()
            let request = ImageRequest(url: server.url("/photo.jpg"), processors: [ImageProcessors.Resize(width: 16)])
            let first = try await pipeline.response(for: request)
            #expect(first.image.width == 16)
            #expect(first.cacheType == nil)
            #expect(first.metrics.bytesDownloaded == Int64(try Fixtures.jpeg.count))
            #expect(first.metrics.decoding != nil && first.metrics.processing.count == 1)
            let second = try await pipeline.response(for: request)
            #expect(second.cacheType == .memory)
            #expect(second.image.width == 16)
            #expect(server.requests(for: "/photo.jpg").count == 1)
            // Reloading ignores the caches and goes to the origin.
            var reload = request
            reload.options = .reloadIgnoringCachedData
            #expect(try await pipeline.response(for: reload).cacheType == nil)
            #expect(server.requests(for: "/photo.jpg").count == 2)
        }
    }

    @Test func decodesToThumbnailSize() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let pipeline = makePipeline()
            let request = ImageRequest(url: server.url("/photo.jpg"),
                                       thumbnail: .init(size: ImageSize(width: 16, height: 16)))
            let response = try await pipeline.response(for: request)
            #expect(max(response.image.width, response.image.height) == 16)
            #expect(response.container.userInfo[.originalSizeKey] != nil)
        }
    }

    @Test func theBytesDecideNotTheContentType() async throws {
        try await withServer { server in
            server.serve("/page", .init(data: Data("<html><body>not an image</body></html>".utf8), contentType: "image/jpeg"))
            server.serve("/mislabelled", .init(data: try Fixtures.jpeg, contentType: "text/plain"))
            let pipeline = makePipeline()
            await #expect(throws: ImagePipeline.Error.self) { try await pipeline.response(for: ImageRequest(url: server.url("/page"))) }
            do {
                _ = try await pipeline.response(for: ImageRequest(url: server.url("/page")))
            } catch ImagePipeline.Error.notAnImage(let type) {
                #expect(type == "image/jpeg")
            }
            #expect(try await pipeline.response(for: ImageRequest(url: server.url("/mislabelled"))).image.width == 37)
        }
    }

    @Test func statusErrorsAndMissingResources() async throws {
        try await withServer { server in
            server.serve("/broken", .init(data: Data(), status: 500))
            let pipeline = makePipeline()
            await #expect { try await pipeline.response(for: ImageRequest(url: server.url("/broken"))) } throws: { error in
                guard case ImagePipeline.Error.statusCode(500, _) = error else { return false }
                return true
            }
            await #expect { try await pipeline.response(for: ImageRequest(url: server.url("/missing"))) } throws: { error in
                guard case ImagePipeline.Error.statusCode(404, _) = error else { return false }
                return true
            }
        }
    }

    @Test func followsBoundedRedirectsAndChecksEachTarget() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let pipeline = makePipeline()
            #expect(try await pipeline.response(for: ImageRequest(url: server.url("/redirect/3/photo.jpg"))).image.width == 37)
            #expect(server.requests(for: "/redirect/3/photo.jpg").count == 1 && server.requests(for: "/photo.jpg").count == 1)
            await #expect { try await pipeline.response(for: ImageRequest(url: server.url("/loop"))) } throws: { error in
                // The loader's own error, kept for the caller to map.
                guard case ImagePipeline.Error.dataLoadingFailed(let cause) = error else { return false }
                return cause as? HTTPDataLoader.LoadError == .tooManyRedirects(5) && "\(error)".contains("more than 5 redirects")
            }
            #expect(server.requests(for: "/loop").count == 6)
            // A policy that refuses a redirect's target stops before it is fetched.
            var loader = HTTPDataLoader.Configuration()
            loader.checkTarget = { url in
                if url.path == "/photo.jpg" { throw RefusedTarget() }
                return nil
            }
            let guarded = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
            await #expect { try await guarded.response(for: ImageRequest(url: server.url("/redirect/1/photo.jpg"))) } throws: { error in
                "\(error)".contains("RefusedTarget")
            }
            #expect(server.requests(for: "/photo.jpg").count == 1)
        }
    }

    /// HTTPS with HTTP/2 negotiated by ALPN, against a server whose certificate the loader was
    /// told to trust (`tlsConfiguration`); the system's trust roots refuse it.
    @Test func speaksHTTP2OverTLS() async throws {
        let folder = Fixtures.root.appendingPathComponent("NukePipeline/Fixtures/tls")
        let certificate = try #require(try NIOSSLCertificate.fromPEMFile(folder.appendingPathComponent("localhost.pem").path).first)
        let key = try NIOSSLPrivateKey(file: folder.appendingPathComponent("localhost-key.pem").path, format: .pem)
        let server = try await TestHTTPServer(tls: .init(certificateChain: [certificate], privateKey: key))
        do {
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg, etag: "\"p\""))
            var loader = HTTPDataLoader.Configuration()
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([certificate])
            loader.tlsConfiguration = tls
            let pipeline = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
            #expect(server.url("/photo.jpg").absoluteString.hasPrefix("https://localhost:"))
            #expect(try await pipeline.response(for: ImageRequest(url: server.url("/photo.jpg"))).image.width == 37)
            #expect(server.requests(for: "/photo.jpg").map(\.version) == [2])
            // The system's trust roots do not know the certificate: the load fails, nothing is
            // served. (AsyncHTTPClient retries a failed handshake until the connect timeout.)
            var strict = HTTPDataLoader.Configuration()
            strict.connectTimeout = .seconds(1)
            let untrusting = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: strict) }
            await #expect { try await untrusting.bytes(for: ImageRequest(url: server.url("/photo.jpg"))) } throws: { error in
                guard case ImagePipeline.Error.dataLoadingFailed = error else { return false }
                return true
            }
            #expect(server.requests(for: "/photo.jpg").count == 1)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    struct RefusedTarget: Error {}

    /// The target check sees the first URL and every redirect's, and the connection goes to the
    /// address it pins: `images.invalid` never resolves (RFC 6761), so only the pin reaches the server.
    @Test func checksTheFirstURLTooAndConnectsToThePinnedAddress() async throws {
        try await withServer { server in
            server.serve("/photo.jpg", .init(data: try Fixtures.jpeg))
            let checked = Mutex<[String]>([])
            var loader = HTTPDataLoader.Configuration()
            loader.checkTarget = { url in
                checked.withLock { $0.append("\(url.host ?? "")\(url.path)") }
                guard url.host == "images.invalid" else { throw RefusedTarget() }
                return "127.0.0.1"
            }
            let pipeline = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
            let url = try #require(URL(string: "http://images.invalid:\(server.port)/redirect/1/photo.jpg"))
            #expect(try await pipeline.response(for: ImageRequest(url: url)).image.width == 37)
            #expect(checked.withLock { $0 } == ["images.invalid/redirect/1/photo.jpg", "images.invalid/photo.jpg"])
            // Refused at the first URL: nothing is sent.
            await #expect { try await pipeline.bytes(for: ImageRequest(url: server.url("/photo.jpg"))) } throws: { error in
                guard case ImagePipeline.Error.dataLoadingFailed(let cause) = error else { return false }
                return cause is RefusedTarget
            }
            #expect(server.requests(for: "/photo.jpg").count == 1)
        }
    }

    @Test func refusesResponsesOverTheSizeLimit() async throws {
        try await withServer { server in
            server.serve("/big", .init(data: Fixtures.jpegLike(100_000)))
            let pipeline = makePipeline { $0.maximumResponseSize = 50_000 }
            await #expect { try await pipeline.bytes(for: ImageRequest(url: server.url("/big"))) } throws: { error in
                guard case ImagePipeline.Error.responseTooLarge(50_000) = error else { return false }
                return true
            }
        }
    }

    @Test func dataProvidersAreLoadedOnceAndCached() async throws {
        let calls = Counter()
        let jpeg = try Fixtures.jpeg
        let request = ImageRequest(resource: .provider(id: "fixture") { calls.increment(); return jpeg })
        let pipeline = makePipeline()
        #expect(try await pipeline.response(for: request).image.width == 37)
        #expect(try await pipeline.response(for: request).cacheType == .memory)
        #expect(calls.value == 1)
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}


extension ImagePipeline {
    /// The response (cache type, metrics) of a request, through its task: the tests' view of
    /// what `image(for:)` returns only the image of.
    func response(for request: ImageRequest) async throws -> ImageResponse {
        try await imageTask(with: request).response
    }

    /// The bytes of `data(for:)`.
    func bytes(for request: ImageRequest) async throws -> Data {
        try await data(for: request).0
    }
}
