import AsyncHTTPClient
import Foundation
import NIOCore
import NukeCore
import NukePipeline
import NukePipelineTestServer
#if canImport(Glibc)
import Glibc
#endif

/// 1,000 thumbnail requests (256 px) over 200 URLs of real photographs served from loopback, 16
/// at a time, each URL asked for 5 times in a shuffled order. Three phases, each in a process of
/// its own:
/// - `hand`: what an app writes without the pipeline, AsyncHTTPClient and the registry's decode
///   to size for every request;
/// - `unshared`: the pipeline with deduplication and the memory cache off, so it does the same
///   work (its overhead against `hand`);
/// - `pipeline`: the pipeline as configured by default (memory cache, shared work).
/// CPU is the process's (user + system, the in-process server's included: the same for `hand` and
/// `unshared`); memory is its peak RSS.
enum ThousandRequests {
    static let urlCount = 200, requestCount = 1000, concurrency = 16
    static let side = 256

    /// The photographs: `--photos DIR`, else `out/benchmarks/steady/photos` in the checkout.
    static func photos() -> [URL]? {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("out/benchmarks/steady/photos")
        if let index = CommandLine.arguments.firstIndex(of: "--photos"), index + 1 < CommandLine.arguments.count {
            folder = URL(fileURLWithPath: CommandLine.arguments[index + 1])
        }
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return nil }
        let files = walker.compactMap { $0 as? URL }.filter { ["jpg", "jpeg"].contains($0.pathExtension.lowercased()) }
            .sorted { $0.path < $1.path }
        return files.isEmpty ? nil : Array(files.prefix(40))
    }

    /// The order of the requests: each URL 5 times, shuffled by a fixed generator.
    static func order() -> [Int] {
        var order = (0..<requestCount).map { $0 % urlCount }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in stride(from: order.count - 1, to: 0, by: -1) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            order.swapAt(index, Int(state >> 33) % (index + 1))
        }
        return order
    }

    static func runPhase(_ phase: String, photos: [URL]?) async throws {
        guard let photos else { fatalError("no photographs") }
        let server = try await TestHTTPServer()
        let bodies = try photos.map { try Data(contentsOf: $0) }
        for index in 0..<urlCount {
            server.serve("/photos/\(index).jpg", .init(data: bodies[index % bodies.count], etag: "\"\(index)\"", contentType: "image/jpeg"))
        }
        let urls = (0..<urlCount).map { server.url("/photos/\($0).jpg") }
        let order = order()
        let before = usage()
        let started = ContinuousClock.now
        var decodes = 0
        switch phase {
        case "hand":
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            try await forEach(order) { index in
                let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(60))
                var body = Data()
                for try await buffer in response.body { body.append(contentsOf: buffer.readableBytesView) }
                var context = ImageDecoderRegistry.shared.makeContext(for: body)
                context.targetSize = ImageSize(width: side, height: side)
                context.contentMode = .aspectFit
                let decodeContext = context
                let thumbnail = try await BlockingWorkQueue.shared.run { try ImageDecoderRegistry.shared.decode(decodeContext) }
                precondition(max(thumbnail.image.width, thumbnail.image.height) == side)
            }
            try await client.shutdown()
            decodes = requestCount
        case "unshared", "pipeline":
            var configuration = ImagePipeline.Configuration()
            configuration.rateLimit = nil
            if phase == "unshared" {
                configuration.isDeduplicationEnabled = false
                configuration.imageCache = nil
            }
            let pipeline = ImagePipeline(configuration: configuration)
            try await forEach(order) { index in
                let request = ImageRequest(url: urls[index], thumbnail: .init(size: ImageSize(width: side, height: side)))
                let response = try await pipeline.imageTask(with: request).response
                precondition(max(response.image.width, response.image.height) == side)
            }
            decodes = pipeline.workCounts.decodes
        default:
            fatalError("unknown phase \(phase)")
        }
        let wall = started.duration(to: .now)
        let after = usage()
        print("\(phase) cpu=\(after.cpu - before.cpu) wall=\(Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18) "
              + "rss=\(after.maxRSS) origin=\(server.requestCount) decodes=\(decodes)")
        await server.shutdown()
    }

    /// Runs `body` for every element, `concurrency` at once.
    static func forEach(_ order: [Int], _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = order.makeIterator()
            for _ in 0..<concurrency { if let index = next.next() { group.addTask { try await body(index) } } }
            while try await group.next() != nil {
                if let index = next.next() { group.addTask { try await body(index) } }
            }
        }
    }

    /// CPU seconds (user + system) and peak RSS in MB so far.
    static func usage() -> (cpu: Double, maxRSS: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, Double(usage.ru_maxrss) / 1024)
    }

    /// Runs the three phases, each in a process of its own, and prints them side by side.
    static func compare(photoCount: Int) throws {
        var results: [String: [String: Double]] = [:]
        for phase in ["hand", "unshared", "pipeline"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["--phase", phase] + CommandLine.arguments.dropFirst()
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix(phase + " ") }) else { fatalError("phase \(phase): \(output)") }
            results[phase] = Dictionary(uniqueKeysWithValues: line.split(separator: " ").dropFirst().compactMap { field in
                let parts = field.split(separator: "=")
                return parts.count == 2 ? (String(parts[0]), Double(parts[1]) ?? 0) : nil
            })
        }
        let hand = results["hand"]!, unshared = results["unshared"]!, shared = results["pipeline"]!
        print(String(format: "1,000 requests over 200 URLs (%d photographs, %d px, 16 at a time): CPU unshared pipeline ÷ by hand %.2f (goal ≤ 1.1); "
                     + "with sharing and the memory cache: origin requests %.0f (goal 200), decodes %.0f, CPU ÷ by hand %.2f; "
                     + "peak RSS MB: by hand %.0f, unshared %.0f, pipeline %.0f (its default ImageCache: a fifth of the memory limit, the cgroup's in a container; Nuke's: a fifth of physical memory, a tenth at ≤ 512 MB)",
                     photoCount, side, unshared["cpu"]! / hand["cpu"]!, shared["origin"]!, shared["decodes"]!, shared["cpu"]! / hand["cpu"]!,
                     hand["rss"]!, unshared["rss"]!, shared["rss"]!))
    }
}
