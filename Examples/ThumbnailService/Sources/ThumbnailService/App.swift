import ArgumentParser
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NukeCore
import NukeIsolation

/// `ThumbnailService --hostname 127.0.0.1 --port 8080`: `POST /thumbnail?size=256&format=webp`
/// with an image as the body answers its thumbnail; `GET /health` answers `ok`.
@main
struct App: AsyncParsableCommand {
    @Option(name: .shortAndLong) var hostname = "127.0.0.1"
    @Option(name: .shortAndLong) var port = 8080
    @Option(help: "Decodes of JPEG, PNG, GIF and WebP at the same time (in process).") var maxDecodes = 4
    @Option(help: "Decodes of HEIC, HEIF, AVIF and SVG at the same time (in sandboxed helpers; slow by nature).") var maxSlowDecodes = 1
    @Option(help: "Requests waiting for a decode, per lane; more get 503 with Retry-After.") var maxWaiting = 64
    @Option(help: "Requests one client may have running or waiting per lane; more get 429.") var maxPerClient = 8
    @Option(help: "Connections one client address may hold open.") var maxConnectionsPerClient = 32
    @Option(help: "Connections open at once.") var maxConnections = 1024
    @Option(help: "The largest upload, in bytes.") var maxUploadBytes = 32 << 20
    @Option(help: "Seconds a request's headers may take to arrive.") var headerTimeout = 10
    @Option(help: "Bytes a second an upload must average, beyond ten seconds.") var minimumUploadRate = 64 << 10

    /// This executable is also the isolation helper for HEIF and SVG.
    static func main() async {
        IsolatedDecoding.runHelperIfRequested()
        do {
            var command = try parseAsRoot()
            if let app = command as? App { try await app.run() } else { try command.run() }
        } catch {
            exit(withError: error)
        }
    }

    func run() async throws {
        var logger = Logger(label: "ThumbnailService")
        logger.logLevel = .info
        // Helpers run below the server's priority, so that slow formats yield the processors to
        // the fast ones; each serves one decode.
        let pool = HelperPool(configuration: IsolationConfiguration(
            limits: IsolationLimits(wallTime: .seconds(10), cpuTime: .seconds(10), addressSpace: 1 << 30),
            maximumHelpers: max(2, maxSlowDecodes + 1), helperNiceness: 10))
        IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)
        try? pool.prewarm(1)
        let thumbnails = Thumbnailer(settings: .init(
            fastSlots: maxDecodes, slowSlots: maxSlowDecodes, waiting: maxWaiting, perClient: maxPerClient,
            maxUploadBytes: maxUploadBytes, minimumBodyRate: minimumUploadRate))

        let router = Router(context: ThumbnailContext.self)
        router.get("/health") { _, _ in "ok\n" }
        router.post("/thumbnail") { request, context in
            try await thumbnails.respond(to: request, context: context)
        }
        let guardSettings = ConnectionGuard.Settings(
            headerTimeout: .seconds(Int64(headerTimeout)), minimumBodyRate: minimumUploadRate,
            maxUploadBytes: maxUploadBytes, perClient: maxConnectionsPerClient)
        let registry = ConnectionGuard.Registry()
        let app = Application(
            router: router,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [ConnectionGuard(settings: guardSettings, registry: registry)],
                idleTimeout: .seconds(Int64(headerTimeout) * 3))),
            configuration: .init(address: .hostname(hostname, port: port), availableConnectionsDelegate: MaximumAvailableConnections(maxConnections)),
            logger: logger)
        logger.info("listening", metadata: [
            "address": "\(hostname):\(port)",
            "sandbox": .string(pool.status.sandbox?.summary ?? "none"),
        ])
        try await app.runService()
        pool.shutdown()
    }
}

/// Hummingbird's basic context, plus the client's address (for per-client fairness).
struct ThumbnailContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's IP address, without its port.
    let clientAddress: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = ConnectionGuard.clientAddress(source.channel.remoteAddress)
    }
}
