import Foundation
import NukeCore
import NukePipeline
import NukePipelineTestServer
import NukeProcessing

/// 100 concurrent requests for one photograph served from loopback, with three processor
/// variants (three thumbnail sizes): the work the pipeline does for them.
enum SharedVariants {
    static func run(photo: Data) async throws -> String {
        let server = try await TestHTTPServer()
        // The body waits until every request has joined, so that all of them are concurrent.
        server.serve("/photo.jpg", .init(data: photo, etag: "\"p\"", contentType: "image/jpeg", pauseAfter: 0))
        var configuration = ImagePipeline.Configuration()
        configuration.rateLimit = nil
        let pipeline = ImagePipeline(configuration: configuration)
        let sides = [128, 256, 512]
        let tasks = (0..<100).map { index in
            pipeline.imageTask(with: ImageRequest(url: server.url("/photo.jpg"), processors: [
                ImageProcessors.Resize(size: ImageSize(width: sides[index % 3], height: sides[index % 3]), contentMode: .aspectFit),
            ]))
        }
        while server.pausedCount("/photo.jpg") < 1 { try await Task.sleep(for: .milliseconds(1)) }
        // Give every task its turn to join the shared work before the body flows.
        for _ in 0..<100 { await Task.yield() }
        server.resume("/photo.jpg")
        var widths: Set<Int> = []
        for task in tasks { widths.insert(try await task.image.width) }
        let (loads, decodes, processings) = pipeline.workCounts
        let origin = server.requests(for: "/photo.jpg").count
        await server.shutdown()
        return "100 concurrent requests for one photograph, 3 processor variants (\(widths.count) sizes out): "
            + "origin requests \(origin), downloads \(loads), decodes \(decodes), processings \(processings) (goal 1, 1, 1, 3)"
    }
}

/// 10,000 requests of churn through an `ImageCache`: thumbnails of 64–256 px over 700 keys, more
/// than the cost limit holds; the most it held and what it holds at the end, against its limit.
enum CacheChurn {
    static func run() -> String {
        let limit = 64 << 20
        let cache = ImageCache(limits: .init(costLimit: limit))
        var peak = 0
        var state: UInt64 = 42
        for index in 0..<10_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let side = 64 + Int(state >> 33) % 193
            cache["https://images.example.com/\(index % 700).jpg"] = ImageContainer(image: Image(bitmap: Bitmap(
                width: side, height: side, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: side * side * 4))))
            peak = max(peak, cache.totalCost)
        }
        return String(format: "ImageCache through 10,000 requests of churn (64–256 px over 700 keys, limit 64 MiB): peak %.3f × the limit, "
                      + "end %.3f × (goal within ±5%%)", Double(peak) / Double(limit), Double(cache.totalCost) / Double(limit))
    }
}
