import AsyncHTTPClient
import Foundation
import NIOCore
import NukeCore
import NukePipeline
import Testing
@testable import ThumbnailServer

/// The service end to end, on loopback only: the server on 127.0.0.1, test origins on 127.0.0.2.
@Suite(.serialized) struct ThumbnailServerTests {
    static let key = Array(repeating: UInt8(0x5A), count: 32)

    static func settings(origins: [String] = [], networks: [String] = []) throws -> ServiceSettings {
        var settings = ServiceSettings()
        settings.signingKey = key
        settings.sourceDirectory = try URL(fileURLWithPath: Fixtures.sourceDirectory()).resolvingSymlinksInPath().path
        settings.origins = origins
        settings.allowedPrivateNetworks = networks.compactMap(IPNetwork.init)
        settings.sourceTimeout = 5
        return settings
    }

    // MARK: - Signatures

    @Test func signedURLsAnswerAndOthersAreRefused() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            let path = signedPath("s:64,f:jpeg", "local:///photo.jpg", key: Self.key)
            let ok = try await get(base + path)
            #expect(ok.status == 200)
            #expect(ok.headers["content-type"] == "image/jpeg")
            // Tampered: another size under the same signature.
            let tampered = path.replacingOccurrences(of: "s:64", with: "s:2048")
            #expect(try await get(base + tampered).status == 403)
            // Another key's signature, and none.
            #expect(try await get(base + signedPath("s:64,f:jpeg", "local:///photo.jpg", key: Array(repeating: 1, count: 32))).status == 403)
            #expect(try await get(base + "/unsafe/s:64,f:jpeg/\(encodeSource("local:///photo.jpg"))").status == 403)
        }
    }

    /// `a:1` keeps an animated upload animated in WebP, every frame filled to the box, with its
    /// loop count and frame count; without it the thumbnail is a still.
    @Test func animationsStayAnimatedWhenAsked() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            let animated = try await get(base + signedPath("fill:16:16,a:1,f:webp", "local:///animated.gif", key: Self.key))
            #expect(animated.status == 200)
            let container = try ImageDecoderRegistry.shared.decode(animated.body)
            let animation = try #require(container.animation)
            #expect(animation.frameCount == 3)
            #expect(animation.loopCount == 3)
            #expect(animation.canvasSize == ImageSize(width: 16, height: 16))
            let still = try await get(base + signedPath("fill:16:16,f:webp", "local:///animated.gif", key: Self.key))
            #expect(still.status == 200)
            #expect(try ImageDecoderRegistry.shared.decode(still.body).animation == nil)
        }
    }

    /// HEAD answers what GET would, without the body; an unsigned one is refused as GET is.
    @Test func headAnswersTheGETsHeaders() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            let path = signedPath("s:64,f:jpeg", "local:///photo.jpg", key: Self.key)
            let full = try await get(base + path)
            let head = try await get(base + path, method: .HEAD)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["content-length"] == "\(full.body.count)")
            #expect(head.headers["etag"] == full.headers["etag"])
            #expect(head.headers["content-type"] == "image/jpeg")
            #expect(try await get(base + "/unsafe/s:64/\(encodeSource("local:///photo.jpg"))", method: .HEAD).status == 403)
        }
    }

    @Test func unsignedURLsOnlyWhenAllowed() async throws {
        var settings = try Self.settings()
        settings.signingKey = nil
        settings.allowUnsigned = true
        try await withServer(settings) { _, port throws in
            #expect(try await get("http://127.0.0.1:\(port)/unsafe/s:64/\(encodeSource("local:///photo.jpg"))").status == 200)
        }
        settings.allowUnsigned = false
        try await withServer(settings) { _, port throws in
            #expect(try await get("http://127.0.0.1:\(port)/unsafe/s:64/\(encodeSource("local:///photo.jpg"))").status == 403)
        }
    }

    @Test func localSourcesStayInTheirDirectory() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            #expect(try await get(base + signedPath("s:64", "local:///escape.jpg", key: Self.key)).status == 403)
            #expect(try await get(base + signedPath("s:64", "local:///missing.jpg", key: Self.key)).status == 404)
            #expect(try await get(base + signedPath("s:64", "local:///../photo.jpg", key: Self.key)).status == 400)
        }
    }

    // MARK: - Remote sources and SSRF

    @Test func remoteSourcesFromAnAllowedOrigin() async throws {
        try await withOrigin { origin throws in
            let settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            try await withServer(settings) { _, port throws in
                let answer = try await get("http://127.0.0.1:\(port)" + signedPath("fill:64:48,f:webp", "http://127.0.0.2:\(origin)/photo.jpg", key: Self.key))
                #expect(answer.status == 200)
                #expect(answer.headers["content-type"] == "image/webp")
            }
        }
    }

    @Test func ssrfRefusals() async throws {
        try await withOrigin { origin throws in
            // 127.0.0.1 and localhost are on the host allow-list, so that only the address check
            // can refuse them; 127.0.0.2 (the test origin) is the one allowed network.
            let settings = try Self.settings(origins: ["127.0.0.2", "127.0.0.1", "localhost", "10.0.0.1", "169.254.169.254", "::1"],
                                             networks: ["127.0.0.2/32"])
            try await withServer(settings) { _, port throws in
                func status(_ source: String) async throws -> (Int, String) {
                    let answer = try await get("http://127.0.0.1:\(port)" + signedPath("s:64", source, key: Self.key))
                    return (answer.status, String(decoding: answer.body, as: UTF8.self))
                }
                for source in ["http://127.0.0.1:\(port)/health", "http://[::1]:\(port)/x", "http://10.0.0.1/x",
                               "http://169.254.169.254/latest/meta-data/", "http://localhost:\(origin)/photo.jpg"] {
                    let (code, body) = try await status(source)
                    #expect(code == 403, "\(source): \(body)")
                    #expect(body.contains("refused address"), "\(source): \(body)")
                }
                // Not on the allow-list at all.
                #expect(try await status("http://example.com/a.jpg").0 == 403)
                // An allowed origin redirecting to 127.0.0.1: the redirect is checked like the
                // first request, and refused.
                let target = "http://127.0.0.1:\(origin)/photo.jpg"
                let (code, body) = try await status("http://127.0.0.2:\(origin)/redirect?to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
                #expect(code == 403, "\(body)")
                #expect(body.contains("127.0.0.1 is loopback"), "\(body)")
                // A redirect within the allowed origin is followed.
                #expect(try await status("http://127.0.0.2:\(origin)/redirect?to=%2Fphoto.jpg").0 == 200)
            }
        }
    }

    @Test func sourceSizeTimeAndRedirectLimits() async throws {
        try await withOrigin(slowDelay: .seconds(3)) { origin throws in
            var settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            settings.maxSourceBytes = 64 << 10
            settings.sourceTimeout = 1
            settings.maxRedirects = 2
            try await withServer(settings) { _, port throws in
                func status(_ source: String) async throws -> Int {
                    try await get("http://127.0.0.1:\(port)" + signedPath("s:64", source, key: Self.key)).status
                }
                let origin = "http://127.0.0.2:\(origin)"
                #expect(try await status("\(origin)/big") == 413)
                #expect(try await status("\(origin)/slow.jpg") == 504)
                // Three redirects, one more than allowed.
                let once = "/redirect?to=%2Fphoto.jpg"
                let twice = "/redirect?to=" + once.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let thrice = "/redirect?to=" + twice.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                #expect(try await status(origin + twice) == 200)
                #expect(try await status(origin + thrice) == 502)
            }
        }
    }

    // MARK: - Origin fetches through NukePipeline

    /// The JPEG decodes the service counted (its `/metrics`).
    static func jpegDecodes(_ base: String) async throws -> Int {
        let text = String(decoding: try await get(base + "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(#"thumbnail_decode_seconds_count{format="jpeg"}"#) }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
    }

    /// Six identical GETs while the origin holds its answer: one origin request, one decode, six
    /// equal thumbnails; three other sizes of one source: one origin request, three decodes.
    @Test func concurrentRequestsShareTheFetchAndTheDecode() async throws {
        let log = OriginLog()
        try await withOrigin(log: log) { origin throws in
            let settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            try await withServer(settings) { server, port throws in
                let base = "http://127.0.0.1:\(port)"
                let path = signedPath("s:64,f:jpeg", "http://127.0.0.2:\(origin)/gated/one", key: Self.key)
                let same = (0..<6).map { _ in Task { try await get(base + path) } }
                try await eventually("six requests waiting") { server.signedWork.waitingCount == 6 && log.count("/gated/one") == 1 }
                log.open("one")
                var answers: [(status: Int, headers: [String: String], body: Data)] = []
                for task in same { answers.append(try await task.value) }
                #expect(answers.allSatisfy { $0.status == 200 && $0.body == answers[0].body })
                #expect(log.count("/gated/one") == 1)
                #expect(server.signedWork.startedCount == 1)
                #expect(try await Self.jpegDecodes(base) == 1)

                let sizes = [32, 48, 96].map { size in
                    Task { try await get(base + signedPath("s:\(size),f:jpeg", "http://127.0.0.2:\(origin)/gated/two", key: Self.key)) }
                }
                try await eventually("three thumbnails waiting for one download") {
                    server.signedWork.waitingCount == 3 && log.count("/gated/two") == 1
                }
                log.open("two")
                for task in sizes { #expect(try await task.value.status == 200) }
                #expect(log.count("/gated/two") == 1)
                #expect(try await Self.jpegDecodes(base) == 4)
            }
        }
    }

    /// A 429 meant for the client whose request made a shared thumbnail is not another client's
    /// answer: a request that joined tries once more, as itself; other failures are shared.
    @Test func aClientsOwnRefusalIsNotSharedWithTheOthers() async throws {
        let work = SharedWork<SignedThumbnails.Outcome>()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let refused = SignedThumbnails.Failure(status: .tooManyRequests, reason: "too many requests from this client at once", retryAfter: 1)
        let first = Task {
            try await SignedThumbnails.shared(work, key: "etag") {
                for await _ in gate { break }
                return .failure(refused)
            }
        }
        try await eventually("the first request's work runs") { work.waitingCount == 1 }
        let second = Task {
            try await SignedThumbnails.shared(work, key: "etag") { .success(.init(output: Data([1, 2, 3]), log: [:])) }
        }
        try await eventually("the second request joined it") { work.waitingCount == 2 }
        open.yield()
        await #expect(throws: refused) { try await first.value }
        let (answer, joined) = try await second.value
        #expect(answer.output == Data([1, 2, 3]) && !joined && work.startedCount == 2)
        // Another failure (the origin's 404) is every joiner's answer, with no second try.
        let notFound = SignedThumbnails.Failure(status: .notFound, reason: "the origin answered 404")
        let (gate2, open2) = AsyncStream<Void>.makeStream()
        let third = Task {
            try await SignedThumbnails.shared(work, key: "other") {
                for await _ in gate2 { break }
                return .failure(notFound)
            }
        }
        try await eventually("the third request's work runs") { work.waitingCount == 1 }
        let fourth = Task { try await SignedThumbnails.shared(work, key: "other") { .success(.init(output: Data(), log: [:])) } }
        try await eventually("the fourth request joined it") { work.waitingCount == 2 }
        open2.yield()
        await #expect(throws: notFound) { try await third.value }
        await #expect(throws: notFound) { try await fourth.value }
        #expect(work.startedCount == 3)
    }

    /// With a source cache, another thumbnail of a source fetched before costs the origin nothing;
    /// without one, it is fetched again.
    @Test func theSourceCacheSparesTheOrigin() async throws {
        let log = OriginLog()
        try await withCachingOrigin(log: log) { settings, source throws in
            var settings = settings
            try await withServer(settings) { server, port throws in
                let base = "http://127.0.0.1:\(port)"
                #expect(try await get(base + signedPath("s:64", source, key: Self.key)).status == 200)
                await server.fetcher.pipeline.configuration.dataCache?.flush()
                #expect(try await get(base + signedPath("s:32", source, key: Self.key)).status == 200)
                #expect(log.count("/photo.jpg") == 1)
            }
            // A host taken off the allow-list is not served from the cache either.
            settings.origins = ["images.example.com"]
            try await withServer(settings) { _, port throws in
                let answer = try await get("http://127.0.0.1:\(port)" + signedPath("s:48", source, key: Self.key))
                #expect(answer.status == 403)
            }
            settings.origins = ["127.0.0.2"]
            settings.sourceCacheDirectory = nil
            try await withServer(settings) { _, port throws in
                #expect(try await get("http://127.0.0.1:\(port)" + signedPath("s:32", source, key: Self.key)).status == 200)
            }
            #expect(log.count("/photo.jpg") == 2)
        }
    }

    /// A source cache entry that does not decode (torn, or written by another program) is removed
    /// and the origin asked once more: the answer is the thumbnail, not a 422 for good.
    @Test func aSourceCacheEntryThatDoesNotDecodeIsFetchedAgain() async throws {
        let log = OriginLog()
        try await withCachingOrigin(log: log) { settings, source throws in
            try await withServer(settings) { server, port throws in
                // What a torn write or a careless program leaves: a JPEG's first bytes, then nothing.
                let request = ImageRequest(http: HTTPRequestDescription(url: URL(string: source)!, headers: [("Accept", "image/*")]))
                server.fetcher.pipeline.cache.storeCachedData(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]), for: request)
                #expect(server.fetcher.isCached(.remote(URL(string: source)!)))
                #expect(try await get("http://127.0.0.1:\(port)" + signedPath("s:64", source, key: Self.key)).status == 200)
                #expect(log.count("/photo.jpg") == 1)
                await server.fetcher.pipeline.configuration.dataCache?.flush()
                #expect(server.fetcher.pipeline.cache.cachedData(for: request) == (try Fixtures.jpeg))
            }
        }
    }

    /// An origin serving `/photo.jpg` (its URL, `source`) and settings that allow it with a source cache in a new folder.
    private func withCachingOrigin(log: OriginLog, _ body: @Sendable (ServiceSettings, String) async throws -> Void) async throws {
        try await withOrigin(log: log) { origin throws in
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnail-sources-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: cache) }
            var settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            settings.sourceCacheDirectory = cache.path
            try await body(settings, "http://127.0.0.2:\(origin)/photo.jpg")
        }
    }

    /// A download's bytes are reserved in the byte budget as they arrive: a source larger than
    /// the budget is 503 with Retry-After (not memory the service does not have), and nothing of
    /// it stays reserved.
    @Test func originDownloadsAreReservedInTheByteBudget() async throws {
        try await withOrigin { origin throws in
            var settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            settings.maxBufferedBytes = 256 << 10
            try await withServer(settings) { server, port throws in
                let answer = try await get("http://127.0.0.1:\(port)" + signedPath("s:64", "http://127.0.0.2:\(origin)/big", key: Self.key))
                #expect(answer.status == 503)
                #expect(answer.headers["retry-after"] == "1")
                #expect(server.thumbnailer.budget.reserved == 0)
                #expect(try await get("http://127.0.0.1:\(port)" + signedPath("s:64", "http://127.0.0.2:\(origin)/photo.jpg", key: Self.key)).status == 200)
            }
        }
    }

    // MARK: - Negotiation and caching

    /// Every answer says whether a cache may keep it: the service's own endpoints, an unknown
    /// path, a refused signature, a bad upload are `no-store`; a thumbnail and its 304 are public
    /// and immutable, with a strong ETag.
    @Test func everyAnswerSaysWhetherACacheMayKeepIt() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            for path in ["/health", "/ready", "/metrics", "/nowhere", "/bad-signature/s:64/bG9jYWw6Ly8vcGhvdG8uanBn"] {
                let answer = try await get(base + path)
                #expect(answer.headers["cache-control"] == "no-store", "\(path): \(answer.status) \(answer.headers)")
            }
            let upload = try await get(base + "/thumbnail?size=64", method: .POST)
            #expect(upload.status >= 400 && upload.headers["cache-control"] == "no-store")
            let url = base + signedPath("s:64", "local:///photo.jpg", key: Self.key)
            let thumbnail = try await get(url)
            #expect(thumbnail.status == 200 && thumbnail.headers["cache-control"]?.hasPrefix("public") == true)
            let etag = try #require(thumbnail.headers["etag"])
            #expect(!etag.hasPrefix("W/"))
            let revalidated = try await get(url, headers: [("If-None-Match", etag)])
            #expect(revalidated.status == 304 && revalidated.headers["cache-control"]?.hasPrefix("public") == true)
        }
    }

    @Test func negotiatesByAcceptAndRevalidatesWith304() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let url = "http://127.0.0.1:\(port)" + signedPath("s:64", "local:///photo.jpg", key: Self.key)
            let avif = try await get(url, headers: [("Accept", "image/avif,image/webp,*/*;q=0.8")])
            #expect(avif.status == 200)
            #expect(avif.headers["content-type"] == "image/avif")
            #expect(avif.headers["vary"] == "Accept")
            #expect(avif.headers["cache-control"] == "public, max-age=31536000, immutable")
            let etag = try #require(avif.headers["etag"])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            let webp = try await get(url, headers: [("Accept", "image/webp,*/*")])
            #expect(webp.headers["content-type"] == "image/webp")
            #expect(webp.headers["etag"] != etag)
            #expect(try await get(url, headers: [("Accept", "*/*")]).headers["content-type"] == "image/jpeg")
            #expect(try await get(url, headers: [("Accept", "image/png")]).status == 406)
            // Revalidation: the same ETag for the same Accept, 304 without a body.
            let again = try await get(url, headers: [("Accept", "image/avif,image/webp,*/*;q=0.8"), ("If-None-Match", "\"other\", \(etag)")])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.headers["etag"] == etag)
            #expect(try await get(url, headers: [("Accept", "image/webp"), ("If-None-Match", etag)]).status == 200)
        }
    }

    // MARK: - Operations

    @Test func healthReadinessRequestIDAndMetrics() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let base = "http://127.0.0.1:\(port)"
            #expect(try await get(base + "/health").status == 200)
            #expect(try await get(base + "/ready").status == 200)
            let echoed = try await get(base + "/health", headers: [("x-request-id", "abc-123")])
            #expect(echoed.headers["x-request-id"] == "abc-123")
            let replaced = try await get(base + "/health", headers: [("x-request-id", "bad id; drop table")])
            #expect(replaced.headers["x-request-id"].map { $0 != "bad id; drop table" && $0.count == 36 } == true)
            _ = try await get(base + signedPath("s:64,f:jpeg", "local:///photo.jpg", key: Self.key))
            _ = try await get(base + "/unsafe/s:64/x")
            let metrics = try await get(base + "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(decoding: metrics.body, as: UTF8.self)
            for line in [
                "# TYPE thumbnail_requests_total counter",
                #"thumbnail_requests_total{route="get",status="200",format="jpeg"} 1"#,
                #"thumbnail_requests_total{route="get",status="403",format="none"} 1"#,
                #"thumbnail_requests_total{route="health",status="200",format="none"} 3"#,
                "# TYPE thumbnail_request_seconds histogram",
                #"thumbnail_request_seconds_count{route="health",status="200"} 3"#,
                "# TYPE thumbnail_decode_seconds histogram",
                #"thumbnail_decode_seconds_count{format="jpeg"} 1"#,
                #"thumbnail_queue_waiting{lane="fast"} 0.0"#,
                #"thumbnail_queue_running{lane="slow"} 0.0"#,
            ] {
                #expect(text.contains(line), "\(line)")
            }
        }
    }

    @Test func busyLaneMakesReadinessFalse() async throws {
        try await withOrigin(slowDelay: .seconds(2)) { origin throws in
            var settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            settings.notReadyWaiting = 1
            try await withServer(settings) { server, port throws in
                // Hold the fast lane's every slot and one more waiting, by hand.
                let lane = server.thumbnailer.fast
                var tickets: [Admission.Ticket] = []
                for _ in 0..<lane.maxRunning {
                    guard case .admitted(let ticket) = await lane.enter(client: "test") else { Issue.record("not admitted"); return }
                    tickets.append(ticket)
                }
                let waiter = Task { await lane.enter(client: "test") }
                while lane.load.waiting == 0 { try await Task.sleep(for: .milliseconds(10)) }
                let answer = try await get("http://127.0.0.1:\(port)/ready")
                #expect(answer.status == 503)
                #expect(String(decoding: answer.body, as: UTF8.self).contains("overloaded"))
                for ticket in tickets { lane.leave(ticket) }
                guard case .admitted(let last) = await waiter.value else { Issue.record("the waiter was not admitted"); return }
                lane.leave(last)
                #expect(try await get("http://127.0.0.1:\(port)/ready").status == 200)
            }
        }
    }

    @Test func drainFinishesInFlightRequestsAndStopsAccepting() async throws {
        try await withOrigin(slowDelay: .seconds(2)) { origin throws in
            var settings = try Self.settings(origins: ["127.0.0.2"], networks: ["127.0.0.2/32"])
            settings.drainDelay = 1
            settings.hostname = "127.0.0.1"
            settings.port = 0
            let server = ThumbnailServer(settings: settings, logger: quietLogger("drain"), helpers: false)
            let (ports, continuation) = AsyncStream<Int>.makeStream()
            let group = server.makeServiceGroup(signals: []) { continuation.yield($0.localAddress?.port ?? 0) }
            let running = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let base = "http://127.0.0.1:\(port)"
            // In flight: its source takes 2 s to arrive.
            let inFlight = Task { try await get(base + signedPath("s:64,f:jpeg", "http://127.0.0.2:\(origin)/slow.jpg", key: Self.key)) }
            try await Task.sleep(for: .milliseconds(300))
            await group.triggerGracefulShutdown()  // what SIGTERM does
            try await Task.sleep(for: .milliseconds(200))
            // Draining: not ready, still answering during the delay.
            let ready = try await get(base + "/ready")
            #expect(ready.status == 503)
            #expect(String(decoding: ready.body, as: UTF8.self) == "draining\n")
            #expect(try await inFlight.value.status == 200)
            try await running.value
            // The listener is closed.
            #expect(!canConnect(port: port))
        }
    }
}
