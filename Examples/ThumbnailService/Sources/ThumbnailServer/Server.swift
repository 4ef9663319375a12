import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NukeCore
import NukeIsolation
import NukePipeline
import ServiceLifecycle
import UnixSignals

/// The service: routes, lanes, helpers, metrics and readiness, run in a service group that
/// drains on SIGTERM.
///
/// - `POST /thumbnail?size=N&format=F`: an upload's thumbnail;
/// - `GET /{signature}/{processing}/{source}`: a signed, cacheable thumbnail (``SignedThumbnails``);
/// - `GET /health`: alive; `GET /ready`: warm, not overloaded, not draining; `GET /metrics`.
public final class ThumbnailServer: Sendable {
    public let settings: ServiceSettings
    let metrics = ServiceMetrics()
    let thumbnailer: Thumbnailer
    let readiness: Readiness
    let pool: HelperPool?
    let logger: Logger
    /// Sources of GET URLs: local files, and origins through NukePipeline.
    let fetcher: SourceFetcher
    /// GET thumbnails being made: identical requests (one ETag) share one fetch, decode and encode.
    let signedWork = SharedWork<SignedThumbnails.Outcome>()

    /// - Parameter helpers: start sandboxed decode helpers (this executable in helper mode);
    ///   off in tests, whose process cannot be a helper.
    public init(settings: ServiceSettings, logger: Logger, helpers: Bool = true) {
        self.settings = settings
        self.logger = logger
        thumbnailer = Thumbnailer(settings: .init(
            fastSlots: settings.maxDecodes, slowSlots: settings.maxSlowDecodes, waiting: settings.maxWaiting,
            perClient: settings.maxPerClient, maxUploadBytes: settings.maxUploadBytes, minimumBodyRate: settings.minimumUploadRate,
            defaultFormat: settings.defaultFormat, defaultQuality: settings.defaultQuality, maxBufferedBytes: settings.maxBufferedBytes,
            spoolDirectory: settings.maxSpooledBytes > 0 ? settings.spoolDirectory : nil, maxSpooledBytes: settings.maxSpooledBytes,
            helpers: settings.helperPoolSize),
            metrics: metrics)
        var sourceCache: DataCache?
        if let directory = settings.sourceCacheDirectory {
            do {
                sourceCache = try DataCache(path: URL(fileURLWithPath: directory), sizeLimit: settings.sourceCacheBytes)
            } catch {
                logger.error("no source cache", metadata: ["directory": .string(directory), "reason": .string("\(error)")])
            }
        }
        fetcher = SourceFetcher(
            directory: settings.sourceDirectory,
            policy: OriginPolicy(hosts: settings.origins, allowedNetworks: settings.allowedPrivateNetworks),
            maxBytes: settings.maxSourceBytes, timeout: .seconds(settings.sourceTimeout), maxRedirects: settings.maxRedirects,
            budget: thumbnailer.budget, cache: sourceCache, maxConcurrentFetches: settings.maxSourceFetches)
        if helpers {
            // Helpers run below the server's priority, so that slow formats yield the processors
            // to the fast ones; each serves one decode.
            var configuration = IsolationConfiguration(
                limits: IsolationLimits(wallTime: .seconds(10), cpuTime: .seconds(10), addressSpace: 1 << 30),
                maximumHelpers: settings.helperPoolSize, helperNiceness: 10)
            // A helper's own words (a decoder's message) go to the log, never to a client.
            configuration.helperTextLog = .handler(.init { [logger] line in
                logger.warning("helper text", metadata: ["helper": .string(LogEscaping.escaped(line))])
            })
            let pool = HelperPool(configuration: configuration)
            IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)
            self.pool = pool
        } else {
            pool = nil
        }
        let prewarm = settings.helperPrewarm
        readiness = Readiness(
            lanes: [thumbnailer.fast, thumbnailer.slow], overloadedAt: settings.notReadyWaiting ?? settings.maxWaiting,
            helpersWarm: { [pool] in
                guard let pool, prewarm > 0 else { return true }
                let status = pool.status
                return status.started > 0 && status.sandbox != nil
            })
    }

    /// The HTTP application: routes, middleware and the connection guard.
    func makeApplication(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: ThumbnailContext.self)
        router.middlewares.add(ClientAddressing(trustedProxies: settings.trustedProxies))
        router.middlewares.add(RequestIdentity<ThumbnailContext>(metrics: metrics))
        router.middlewares.add(CacheControlDefault())
        router.get("/health") { _, _ in "ok\n" }
        router.get("/ready") { [readiness] _, _ -> Response in
            if let reason = readiness.notReadyReason {
                return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"], body: .init(byteBuffer: ByteBuffer(string: reason + "\n")))
            }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
        }
        router.get("/metrics") { [metrics, thumbnailer, pool] _, _ -> Response in
            let text = metrics.exposition(lanes: [thumbnailer.fast, thumbnailer.slow], helpers: pool.map { ($0.status.started, $0.status.replaced) })
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.post("/thumbnail") { [thumbnailer] request, context in
            try await thumbnailer.respond(to: request, context: context)
        }
        let signed = SignedThumbnails(
            signer: URLSigner(key: settings.signingKey, salt: settings.signingSalt, allowsUnsigned: settings.allowUnsigned),
            fetcher: fetcher, thumbnailer: thumbnailer, work: signedWork, cacheMaxAge: settings.cacheMaxAge)
        router.get("/:signature/:processing/**") { request, context in
            try await signed.respond(to: request, context: context)
        }
        // HEAD, as a CDN may ask: the GET's status and headers (length, type, ETag), no body.
        router.head("/:signature/:processing/**") { request, context in
            try await signed.respond(to: request, context: context).createHeadResponse()
        }
        let guardSettings = ConnectionGuard.Settings(
            headerTimeout: .seconds(Int64(settings.headerTimeout)), minimumBodyRate: settings.minimumUploadRate,
            maxUploadBytes: settings.maxUploadBytes, perClient: settings.maxConnectionsPerClient,
            uncappedPeers: ClientAddressing(trustedProxies: settings.trustedProxies), proxyProtocol: settings.proxyProtocol)
        let registry = ConnectionGuard.Registry()
        return Application(
            router: router,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [ConnectionGuard(settings: guardSettings, registry: registry)],
                idleTimeout: .seconds(Int64(settings.headerTimeout) * 3))),
            configuration: .init(address: .hostname(settings.hostname, port: settings.port),
                                 availableConnectionsDelegate: MaximumAvailableConnections(settings.maxConnections)),
            onServerRunning: onServerRunning,
            logger: logger)
    }

    /// The HTTP server and the drain step in one service group: SIGTERM or SIGINT turns
    /// readiness off, waits `drainDelay`, then stops accepting and lets in-flight requests finish.
    public func makeServiceGroup(signals: [UnixSignal] = [.sigterm, .sigint],
                                 onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> ServiceGroup {
        let application = makeApplication(onServerRunning: onServerRunning)
        let drain = DrainService(readiness: readiness, delay: .seconds(settings.drainDelay), logger: logger)
        // Services shut down in reverse order: the drain step first, then the server.
        return ServiceGroup(configuration: .init(services: [application, drain], gracefulShutdownSignals: signals, logger: logger))
    }

    /// Runs until SIGTERM or SIGINT, then drains.
    public func run() async throws {
        if let pool, settings.helperPrewarm > 0 {
            do {
                try pool.prewarm(settings.helperPrewarm)
            } catch {
                logger.warning("helpers did not start", metadata: ["error": .string(LogEscaping.escaped("\(error)"))])
            }
        }
        logger.info("listening", metadata: [
            "address": "\(settings.hostname):\(settings.port)",
            "sandbox": .string(pool?.status.sandbox?.summary ?? "none"),
            "signing": .string(settings.signingKey != nil ? "key" : settings.allowUnsigned ? "unsigned allowed" : "GET URLs off"),
            "origins": .string(settings.origins.joined(separator: ",")),
        ])
        try await makeServiceGroup().run()
        await pool?.shutdown()
        logger.info("stopped")
    }
}

/// Hummingbird's basic context, plus the client's address (for per-client fairness).
struct ThumbnailContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's peer: the client, or a proxy in front of it.
    let peerAddress: String
    /// The client's IP address, without its port: the peer's, or what a trusted proxy says
    /// (``ClientAddressing``).
    var clientAddress: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = ConnectionGuard.clientAddress(source.channel.remoteAddress)
        clientAddress = peerAddress
    }
}
