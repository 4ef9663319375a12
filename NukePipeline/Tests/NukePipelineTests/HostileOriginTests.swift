import Foundation
import NIOSSL
import NukeCore
import NukeFetch
import NukePipelineTestServer
import Synchronization
import Testing
@testable import NukePipeline

/// The pipeline behind origins that lie, change between requests and serve many users: one case
/// per way a careless or hostile server broke it, each answered byte for byte by a
/// ``ScriptedOrigin`` on loopback. Every case ends with the right bytes or a clear error, and
/// nothing wrong in any cache.
@Suite struct HostileOriginTests {
    static let v1 = Fixtures.jpegLike(30_000, seed: 1)
    static let v2 = Fixtures.jpegLike(30_000, seed: 2)
    static let date = "Sun, 06 Dec 2026 10:00:00 GMT"
    static let earlier = "Sat, 05 Dec 2026 10:00:00 GMT"

    // MARK: - Credentials and redirects

    /// A redirect to another port, or to another host name for the same server, is another
    /// origin: it gets no `Authorization`, `Cookie` or `Proxy-Authorization` (checked on the wire);
    /// a redirect within the origin keeps them, and the app's hook adds what it chooses.
    @Test(arguments: ["other-port", "other-host"]) func credentialsStayWithTheirOrigin(_ target: String) async throws {
        let second = try await ScriptedOrigin { _, _ in ScriptedOrigin.response(200, body: Self.v2) }
        let first = try await ScriptedOrigin { request, _ in
            if request.target == "/same" { return ScriptedOrigin.response(302, [("Location", "/final")]) }
            if request.target == "/final" { return ScriptedOrigin.response(200, body: Self.v1) }
            return ScriptedOrigin.response(302, [("Location", "")])
        }
        defer { Task { await first.shutdown(); await second.shutdown() } }
        let away = target == "other-port" ? second.url("/elsewhere") : first.url("/final", host: "localhost")
        let hop = try await ScriptedOrigin { _, _ in ScriptedOrigin.response(302, [("Location", away.absoluteString)]) }
        defer { Task { await hop.shutdown() } }
        let secrets: [(name: String, value: String)] = [("Authorization", "Bearer secret-token"), ("Cookie", "session=abc"),
                                                        ("Proxy-Authorization", "Basic cHJveHk="), ("Accept", "image/*")]
        var loader = HTTPDataLoader.Configuration()
        loader.headersForRedirect = { _, to, _ in to.path == "/elsewhere" ? [("Authorization", "Bearer for-the-cdn")] : [] }
        let pipeline = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
        _ = try await pipeline.bytes(for: ImageRequest(http: HTTPRequestDescription(url: hop.url("/start"), headers: secrets)))
        let arrived = try #require((target == "other-port" ? second.requests : first.requests).last)
        #expect(arrived.header("Cookie") == nil && arrived.header("Proxy-Authorization") == nil)
        #expect(arrived.header("Authorization") == (target == "other-port" ? "Bearer for-the-cdn" : nil))
        #expect(arrived.header("Accept") == "image/*")
        #expect(hop.requests.first?.header("Authorization") == "Bearer secret-token")

        // Within one origin the credentials go on.
        _ = try await pipeline.bytes(for: ImageRequest(http: HTTPRequestDescription(url: first.url("/same"), headers: secrets)))
        let same = try #require(first.requests.last)
        #expect(same.target == "/final" && same.header("Authorization") == "Bearer secret-token" && same.header("Cookie") == "session=abc")
    }

    /// A redirect from https to http is refused unless the loader allows it.
    @Test func anHTTPSToHTTPRedirectIsRefused() async throws {
        let folder = Fixtures.root.appendingPathComponent("NukePipeline/Fixtures/tls")
        let certificate = try #require(try NIOSSLCertificate.fromPEMFile(folder.appendingPathComponent("localhost.pem").path).first)
        let key = try NIOSSLPrivateKey(file: folder.appendingPathComponent("localhost-key.pem").path, format: .pem)
        let secure = try await TestHTTPServer(tls: .init(certificateChain: [certificate], privateKey: key))
        let plain = try await ScriptedOrigin { _, _ in ScriptedOrigin.response(200, body: Self.v1) }
        defer { Task { await secure.shutdown(); await plain.shutdown() } }
        secure.serve("/down", .init(data: Data(), status: 302, location: plain.url("/photo.jpg").absoluteString))
        var loader = HTTPDataLoader.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        loader.tlsConfiguration = tls
        let pipeline = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
        await #expect { try await pipeline.bytes(for: ImageRequest(url: secure.url("/down"))) } throws: { error in
            guard case ImagePipeline.Error.dataLoadingFailed(HTTPDataLoader.LoadError.insecureRedirect) = error else { return false }
            return true
        }
        #expect(plain.requests.isEmpty)
        loader.allowsInsecureRedirects = true
        let lenient = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
        #expect(try await lenient.bytes(for: ImageRequest(url: secure.url("/down"))) == Self.v1)
    }

    // MARK: - Resumes

    /// The resource changed between a cut and the resume, and the origin ignored `If-Range`: its
    /// `206` carries another version's validator (a strong ETag, a weak one beside an unchanged
    /// date, another date), or a complete length or a start that is not the first response's. The
    /// partial data goes, and the whole resource is loaded once: the result is one version, whole.
    @Test(arguments: ["etag", "weak-etag", "date", "total", "start", "short-range", "long-range"])
    func aResumeNeverSplicesTwoVersions(_ lie: String) async throws {
        let half = Self.v1.count / 2
        let origin = try await ScriptedOrigin { request, index in
            let v1Headers: [(String, String)]
            let v2Headers: [(String, String)]
            switch lie {
            case "weak-etag":
                v1Headers = [("ETag", "W/\"1\""), ("Last-Modified", Self.earlier), ("Date", Self.date)]
                v2Headers = [("ETag", "W/\"2\""), ("Last-Modified", Self.earlier), ("Date", Self.date)]
            case "date":
                v1Headers = [("Last-Modified", Self.earlier), ("Date", Self.date)]
                v2Headers = [("Last-Modified", "Sat, 05 Dec 2026 11:00:00 GMT"), ("Date", Self.date)]
            default:
                v1Headers = [("ETag", "\"1\"")]
                v2Headers = lie == "etag" ? [("ETag", "\"2\"")] : [("ETag", "\"1\"")]
            }
            if index == 0 { return ScriptedOrigin.response(200, v1Headers, body: Self.v1, cutAfter: half) }
            if request.header("Range") == nil { return ScriptedOrigin.response(200, v2Headers, body: Self.v2) }
            // The lie: a 206 of version 2, whatever If-Range said.
            let count = Self.v2.count
            var first = half, last = count - 1, total = count, body = Self.v2[half...]
            switch lie {
            case "total": total = count + 10
            case "start": first = half - 100; body = Self.v2[(half - 100)...]
            case "short-range": last = half + 999; body = Self.v2[half...(half + 999)]
            case "long-range": last = half + 999
            default: break
            }
            return ScriptedOrigin.response(206, v2Headers + [("Content-Range", "bytes \(first)-\(last)/\(total)")], body: Data(body))
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline()
        let request = ImageRequest(url: origin.url("/photo.jpg"))
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: request) }
        let data = try await pipeline.bytes(for: request)
        #expect(data == Self.v2, "one version, whole")
        let requests = origin.requests
        // A weak ETag or a date within... : If-Range only with a strong validator.
        #expect(requests[1].header("If-Range") == (lie == "weak-etag" || lie == "date" ? Self.earlier : "\"1\""))
        #expect(requests.count == 3 && requests[2].header("Range") == nil, "the resume refused, the whole resource once")
    }

    /// A `Last-Modified` within a second of `Date` is weak (RFC 9110 §8.8.2.2): no `If-Range`, so
    /// nothing is resumed against it; the partial data is not kept.
    @Test func aWeakDateIsNoResumeValidator() async throws {
        let origin = try await ScriptedOrigin { _, index in
            ScriptedOrigin.response(200, [("Last-Modified", Self.date), ("Date", Self.date)], body: index == 0 ? Self.v1 : Self.v2,
                                    cutAfter: index == 0 ? 10_000 : nil)
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline()
        let request = ImageRequest(url: origin.url("/photo.jpg"))
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: request) }
        #expect(try await pipeline.bytes(for: request) == Self.v2)
        #expect(origin.requests[1].header("Range") == nil && origin.requests[1].header("If-Range") == nil)
    }

    /// An honest resume still works: the same version's `206`, from the stored length to the end.
    @Test func anHonestResumeIsJoined() async throws {
        let half = Self.v1.count / 2
        let origin = try await ScriptedOrigin { request, index in
            if index == 0 { return ScriptedOrigin.response(200, [("ETag", "\"1\"")], body: Self.v1, cutAfter: half) }
            guard request.header("If-Range") == "\"1\"", request.header("Range") == "bytes=\(half)-" else {
                return ScriptedOrigin.response(400)
            }
            return ScriptedOrigin.response(206, [("ETag", "\"1\""), ("Content-Range", "bytes \(half)-\(Self.v1.count - 1)/\(Self.v1.count)")],
                                           body: Self.v1[half...])
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline()
        let request = ImageRequest(url: origin.url("/photo.jpg"))
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: request) }
        #expect(try await pipeline.bytes(for: request) == Self.v1)
        #expect(origin.requests.count == 2)
    }

    // MARK: - Framing

    /// A body shorter than its framing says is an error, never data, and is cached nowhere: a
    /// `Content-Length` the connection does not keep, a chunked body without its last chunk.
    @Test(arguments: ["content-length", "chunked"]) func aCutBodyIsNeverData(_ framing: String) async throws {
        let origin = try await ScriptedOrigin { _, index in
            if index > 0 { return ScriptedOrigin.response(200, body: Self.v2) }
            return framing == "chunked" ? ScriptedOrigin.chunked(200, body: Self.v1.prefix(12_000), cut: true)
                : ScriptedOrigin.response(200, [("Content-Length", String(Self.v1.count))], body: Self.v1, cutAfter: 12_000)
        }
        defer { Task { await origin.shutdown() } }
        let cache = try DataCache(path: temporaryFolder())
        let pipeline = makePipeline(dataCache: cache)
        let request = ImageRequest(url: origin.url("/photo.jpg"))
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.bytes(for: request) }
        await cache.flush()
        #expect(!cache.containsData(forKey: pipeline.originalDataKey(for: request)))
        #expect(try await pipeline.bytes(for: request) == Self.v2)
        #expect(origin.requests.count == 2)
    }

    /// Bytes that do not decode are not kept: the next request asks the origin again. An entry
    /// on disk that does not decode is removed and loaded once more.
    @Test func onlyBytesThatDecodeAreKept() async throws {
        let good = try Fixtures.jpeg
        let origin = try await ScriptedOrigin { _, index in ScriptedOrigin.response(200, body: index == 0 ? Self.v1 : good) }
        defer { Task { await origin.shutdown() } }
        let cache = try DataCache(path: temporaryFolder())
        let pipeline = makePipeline(dataCache: cache)
        let request = ImageRequest(url: origin.url("/photo.jpg"))
        await #expect(throws: ImagePipeline.Error.self) { try await pipeline.response(for: request) }
        await cache.flush()
        #expect(!cache.containsData(forKey: pipeline.originalDataKey(for: request)))
        #expect(try await pipeline.response(for: request).image.width == 37)
        #expect(origin.requests.count == 2)

        // A bad entry on disk (another version of the program, a disk error): removed, refetched once.
        let other = ImageRequest(url: origin.url("/other.jpg"))
        cache.storeData(Self.v2, forKey: pipeline.originalDataKey(for: other))
        await cache.flush()
        let response = try await pipeline.response(for: other)
        #expect(response.image.width == 37 && origin.requests.count == 3)
        await cache.flush()
        #expect(cache.data(forKey: pipeline.originalDataKey(for: other)) == good)
    }

    // MARK: - Many users

    /// `Vary: Authorization`: user B never gets user A's image, from the memory cache or the
    /// HTTP cache; with the same token, the cache serves it.
    @Test func aVaryingResponseIsNotServedToAnotherUser() async throws {
        let a = try Fixtures.jpeg, b = try Fixtures.png
        let origin = try await ScriptedOrigin { request, _ in
            ScriptedOrigin.response(200, [("Vary", "Authorization"), ("Cache-Control", "max-age=600")],
                                    body: request.header("Authorization") == "Bearer A" ? a : b)
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline()
        func request(_ token: String) -> ImageRequest {
            ImageRequest(http: HTTPRequestDescription(url: origin.url("/me.jpg"), headers: [("Authorization", "Bearer \(token)")]))
        }
        #expect(try await pipeline.response(for: request("A")).image.width == 37)
        #expect(try await pipeline.response(for: request("B")).image.width == 160)
        #expect(try await pipeline.response(for: request("A")).cacheType == .memory)
        #expect(origin.requests.count == 2)
        // And without the memory cache, from the HTTP cache.
        let noMemory = makePipeline { $0.imageCache = nil }
        #expect(try await noMemory.response(for: request("A")).image.width == 37)
        #expect(try await noMemory.response(for: request("B")).image.width == 160)
        #expect(origin.requests.count == 4)
    }

    /// `Vary: Accept` without credentials: each `Accept` gets its own variant.
    @Test func aVaryingResponseKeepsItsVariantsApart() async throws {
        let a = try Fixtures.jpeg, b = try Fixtures.png
        let origin = try await ScriptedOrigin { request, _ in
            ScriptedOrigin.response(200, [("Vary", "Accept"), ("Cache-Control", "max-age=600")],
                                    body: request.header("Accept") == "image/jpeg" ? a : b)
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline(dataCache: try DataCache(path: temporaryFolder()))
        func request(_ accept: String) -> ImageRequest {
            ImageRequest(http: HTTPRequestDescription(url: origin.url("/photo"), headers: [("Accept", accept)]))
        }
        #expect(try await pipeline.response(for: request("image/jpeg")).image.width == 37)
        #expect(try await pipeline.response(for: request("image/png")).image.width == 160)
        #expect(try await pipeline.response(for: request("image/jpeg")).image.width == 37)
        #expect(origin.requests.count == 2)
    }

    /// Two users' requests in flight at once never share a download: user B does not join user
    /// A's (one request each reaches the origin, each with its own token).
    @Test func requestsWithOtherCredentialsNeverJoin() async throws {
        try await withServer { server in
            server.serve("/me.jpg", .init(data: try Fixtures.jpeg, pauseAfter: 0))
            let pipeline = makePipeline()
            func request(_ token: String) -> ImageRequest {
                ImageRequest(http: HTTPRequestDescription(url: server.url("/me.jpg"), headers: [("Authorization", "Bearer \(token)")]))
            }
            let a = pipeline.imageTask(with: request("A"))
            try await eventually("A's download started") { server.pausedCount("/me.jpg") == 1 }
            let b = pipeline.imageTask(with: request("B"))
            let sameAsA = pipeline.imageTask(with: request("A"))
            try await eventually("B has a download of its own") { server.pausedCount("/me.jpg") == 2 }
            try await eventually("A's second request joined A's") { pipeline.decodeJobs.subscriberCount == 3 }
            server.resume("/me.jpg")
            for task in [a, b, sameAsA] { #expect(try await task.image.width == 37) }
            #expect(server.requests(for: "/me.jpg").count == 2)
        }
    }

    /// A `304` updates the kept response's headers; it never replaces them: a `no-cache` response
    /// stays revalidated on every use after a bare `304`, and a `Vary` the `304` does not repeat
    /// still keeps the variants apart.
    @Test func aNotModifiedMergesTheKeptHeaders() async throws {
        let origin = try await ScriptedOrigin { request, _ in
            let accept = request.header("Accept") ?? ""
            let etag = "\"\(accept)\""
            if request.header("If-None-Match") == etag { return ScriptedOrigin.response(304) }
            return ScriptedOrigin.response(200, [("ETag", etag), ("Last-Modified", Self.earlier), ("Date", Self.date),
                                                 ("Cache-Control", "no-cache"), ("Vary", "Accept")],
                                           body: accept == "image/a" ? Self.v1 : Self.v2)
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline { $0.imageCache = nil }
        func request(_ accept: String) -> ImageRequest {
            ImageRequest(http: HTTPRequestDescription(url: origin.url("/photo"), headers: [("Accept", accept)]))
        }
        #expect(try await pipeline.bytes(for: request("image/a")) == Self.v1)
        #expect(try await pipeline.bytes(for: request("image/a")) == Self.v1)  // a bare 304
        #expect(try await pipeline.bytes(for: request("image/a")) == Self.v1)  // still no-cache: asked again
        #expect(origin.requests.count == 3 && origin.requests[2].header("If-None-Match") == "\"image/a\"")
        #expect(try await pipeline.bytes(for: request("image/b")) == Self.v2)
        #expect(origin.requests.count == 4 && origin.requests[3].header("If-None-Match") == nil)
    }

    // MARK: - Keys

    /// A fragment, the scheme's and the host's case and the default port name the same resource:
    /// one download, one entry.
    @Test func keysAreNormalised() async throws {
        let good = try Fixtures.jpeg
        let origin = try await ScriptedOrigin { _, _ in ScriptedOrigin.response(200, body: good) }
        defer { Task { await origin.shutdown() } }
        let cache = try DataCache(path: temporaryFolder())
        let pipeline = makePipeline(dataCache: cache)
        let spellings = ["http://127.0.0.1:\(origin.port)/photo.jpg", "http://127.0.0.1:\(origin.port)/photo.jpg#top",
                         "HTTP://127.0.0.1:\(origin.port)/photo.jpg", "http://LOCALHOST:\(origin.port)/photo.jpg"]
        for spelling in spellings {
            #expect(try await pipeline.response(for: ImageRequest(url: URL(string: spelling)!)).image.width == 37)
        }
        // 127.0.0.1 and localhost are two names: two entries.
        #expect(origin.requests.count == 2)
        #expect(ResponseIdentities.normalizedURL(URL(string: "HTTPS://Example.COM:443/a/B?q=1#x")!) == "https://example.com/a/B?q=1")
        #expect(ResponseIdentities.normalizedURL(URL(string: "http://example.com")!) == "http://example.com/")
        #expect(ResponseIdentities.normalizedURL(URL(string: "http://example.com:8080/")!) == "http://example.com:8080/")
    }

    /// What responses said they vary on is kept for a bounded number of URLs (a server sees
    /// unbounded ones); a forgotten URL's key leaves the variant headers out, so it misses every
    /// variant stored under the learned keys: a download, never another user's entry.
    @Test func learnedVaryIsBoundedAndForgettingMisses() throws {
        let identities = ResponseIdentities(learnedLimit: 3)
        let varying = DataLoadResponse(statusCode: 200, headers: [("Vary", "Authorization")])
        func request(_ index: Int, user: String) -> ImageRequest {
            ImageRequest(http: HTTPRequestDescription(url: URL(string: "https://example.com/\(index).jpg")!,
                                                      headers: [("Authorization", user)]))
        }
        let first = identities.keys(for: request(0, user: "a")).cache
        identities.learn(varying, for: request(0, user: "a"))
        let learned = identities.keys(for: request(0, user: "a")).cache
        #expect(learned != first && learned.contains("authorization"))
        for index in 1..<50 { identities.learn(varying, for: request(index, user: "a")) }
        #expect(identities.learnedCount == 3)
        // URL 0 was forgotten: its key is the unlearned one, which no stored variant has.
        #expect(identities.keys(for: request(0, user: "a")).cache == first)
        #expect(identities.keys(for: request(49, user: "b")).cache != identities.keys(for: request(49, user: "a")).cache)
    }

    // MARK: - Failures

    /// A refused connection ends at once (not after the connect timeout, here ten minutes) and
    /// names the host, the port and the system's reason; `nuke fetch` does not try it again.
    @Test(.timeLimit(.minutes(1))) func aRefusedConnectionFailsAtOnceAndSaysWhy() async throws {
        let closed = try await ScriptedOrigin { _, _ in Data() }
        let port = closed.port
        await closed.shutdown()
        var loader = HTTPDataLoader.Configuration()
        loader.connectTimeout = .seconds(600)
        let pipeline = makePipeline { $0.dataLoader = HTTPDataLoader(configuration: loader) }
        let url = URL(string: "http://127.0.0.1:\(port)/photo.jpg")!
        await #expect { try await pipeline.bytes(for: ImageRequest(url: url)) } throws: { error in
            guard case ImagePipeline.Error.dataLoadingFailed(HTTPDataLoader.LoadError.cannotConnect(let host, let at, let reason)) = error
            else { return false }
            return host == "127.0.0.1" && at == port && reason == "Connection refused"
        }
        var options = FetchRun.Options(urls: [url], output: temporaryFolder())
        options.retries = 3
        let summary = try await FetchRun(pipeline: pipeline, options: options).run()
        #expect("\(summary)".contains("cannot connect to 127.0.0.1 port \(port): Connection refused"))
    }

    // MARK: - A random origin

    /// 200 fetches from an origin that, at random, changes version, cuts bodies (by length or by
    /// chunk), ignores `If-Range`, answers other ranges, lies about lengths and answers `304`:
    /// every success is one version, byte for byte. (With the 206 checks of the last version, the
    /// first seed's run spliced versions.)
    @Test(arguments: [1, 2, 3]) func everySuccessIsOneWholeVersion(seed: UInt64) async throws {
        let versions = (0..<4).map { Fixtures.jpegLike(20_000, seed: UInt8(10 + $0)) }
        let box = RandomOrigin(seed: seed)
        let origin = try await ScriptedOrigin { request, _ in
            box.state.withLock { state -> Data in
                if state.rng.next() % 4 == 0 { state.version = Int(state.rng.next() % 4) }
                let body = versions[state.version]
                let etag = "\"\(state.version)\""
                let headers = [("ETag", etag), ("Cache-Control", state.rng.next() % 2 == 0 ? "no-cache" : "max-age=0")]
                let cut = Int(state.rng.next() % UInt64(body.count))
                if request.header("If-None-Match") == etag, state.rng.next() % 2 == 0 { return ScriptedOrigin.response(304) }
                if let range = request.header("Range"), let start = Int(range.dropFirst(6).dropLast()), start < body.count {
                    // Honest or not, If-Range is ignored half of the time.
                    let honours = state.rng.next() % 2 == 0
                    if honours, request.header("If-Range") != etag { return ScriptedOrigin.response(200, headers, body: body) }
                    let from = state.rng.next() % 3 == 0 ? max(0, start - 7) : start
                    let to = state.rng.next() % 3 == 0 ? body.count - 11 : body.count - 1
                    return ScriptedOrigin.response(206, headers + [("Content-Range", "bytes \(from)-\(to)/\(body.count)")],
                                                   body: body[from...to], cutAfter: state.rng.next() % 3 == 0 ? cut / 2 : nil)
                }
                switch state.rng.next() % 4 {
                case 0: return ScriptedOrigin.response(200, headers, body: body, cutAfter: cut)
                case 1: return ScriptedOrigin.chunked(200, headers, body: body, chunk: 3000, cut: true)
                case 2: return ScriptedOrigin.chunked(200, headers, body: body, chunk: 3000)
                default: return ScriptedOrigin.response(200, headers, body: body)
                }
            }
        }
        defer { Task { await origin.shutdown() } }
        let pipeline = makePipeline()
        var successes = 0
        var choices = SplitMix(seed: seed &* 7)
        for _ in 0..<200 {
            // Half of the requests skip the HTTP cache: a kept response is revalidated, never resumed.
            let request = ImageRequest(url: origin.url("/photo.jpg"), options: choices.next() % 2 == 0 ? .reloadIgnoringCachedData : [])
            guard let data = try? await pipeline.bytes(for: request) else { continue }
            successes += 1
            #expect(versions.contains(data), "a success is one whole version")
        }
        #expect(successes > 0)
    }
}

/// The random origin's state, shared with its script.
final class RandomOrigin: Sendable {
    let state: Mutex<(rng: SplitMix, version: Int)>
    init(seed: UInt64) { state = Mutex((SplitMix(seed: seed), 0)) }
}

/// A small seeded generator: the same sequence for the same seed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
