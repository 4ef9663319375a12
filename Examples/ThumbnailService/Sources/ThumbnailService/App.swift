import ArgumentParser
import Hummingbird
import Logging
import NukeCore
import NukeIsolation

/// `ThumbnailService --hostname 127.0.0.1 --port 8080`: `POST /thumbnail?size=256&format=webp`
/// with an image as the body answers its thumbnail; `GET /health` answers `ok`.
@main
struct App: AsyncParsableCommand {
    @Option(name: .shortAndLong) var hostname = "127.0.0.1"
    @Option(name: .shortAndLong) var port = 8080
    @Option(help: "Decodes at the same time; more requests wait their turn.") var maxDecodes = 4
    @Option(help: "Requests waiting for a decode; more get 503 with Retry-After.") var maxWaiting = 64
    @Option(help: "The largest upload, in bytes.") var maxUploadBytes = 32 << 20

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
        let pool = HelperPool(configuration: IsolationConfiguration(limits: IsolationLimits(wallTime: .seconds(10), cpuTime: .seconds(10), addressSpace: 1 << 30)))
        IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)
        try? pool.prewarm(1)
        let thumbnails = Thumbnailer(maxDecodes: maxDecodes, maxWaiting: maxWaiting, maxUploadBytes: maxUploadBytes)

        let router = Router()
        router.get("/health") { _, _ in "ok\n" }
        router.post("/thumbnail") { request, context in
            try await thumbnails.respond(to: request, context: context)
        }
        let app = Application(router: router, configuration: .init(address: .hostname(hostname, port: port)), logger: logger)
        logger.info("listening", metadata: ["address": "\(hostname):\(port)", "sandbox": "\(pool.status.isSandboxed ?? false)"])
        try await app.runService()
        pool.shutdown()
    }
}
