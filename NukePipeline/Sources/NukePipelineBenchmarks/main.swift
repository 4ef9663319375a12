// The caches' figures from one run, beside what they are compared with:
// - ImageCache: median and throughput of hits on one thread;
// - DataCache: a hit of a 50 KB entry against a plain read of the same file;
// - DataCache: a sweep of 100,000 entries;
// - a 10 MB download cut at 90%: the share of its bytes the resumed request fetches again.
// Run: swift run -c release NukePipelineBenchmarks
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NukeCore
import NIOCore
import NukePipeline
import NukePipelineTestServer

let clock = ContinuousClock()

// `--phase NAME --photos DIR`: one phase of the 1,000-request run, in a process of its own (its
// peak memory is its own); the parent starts the three and prints them side by side.
if let index = CommandLine.arguments.firstIndex(of: "--phase"), index + 1 < CommandLine.arguments.count {
    try await ThousandRequests.runPhase(CommandLine.arguments[index + 1], photos: ThousandRequests.photos())
    exit(0)
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// MARK: - ImageCache hits

let memory = ImageCache(limits: .init(costLimit: 1 << 30))
let keys = (0..<1000).map { "https://images.example.com/photos/\($0).jpg?w=256" }
for key in keys {
    memory[key] = ImageContainer(image: Image(bitmap: Bitmap(width: 16, height: 16, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: 1024))))
}
var batches: [Double] = []
var found = 0
let lookups = 1_000_000
let started = clock.now
for batch in 0..<(lookups / 1000) {
    let batchStart = clock.now
    for index in 0..<1000 where memory[keys[(index &* 7 &+ batch) % 1000]] != nil { found += 1 }
    batches.append(nanoseconds(batchStart.duration(to: clock.now)) / 1000)
}
let perSecond = Double(lookups) / (nanoseconds(started.duration(to: clock.now)) / 1e9)
print(String(format: "ImageCache hit: median %.0f ns, %.2f M lookups/s on one thread (goals: ≤ 2,000 ns, ≥ 1 M/s)", median(batches), perSecond / 1e6))
precondition(found == lookups)

print(CacheChurn.run())

// MARK: - DataCache hits against plain reads

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-pipeline-bench-\(UUID().uuidString)")
let disk = try DataCache(path: folder, sizeLimit: 1 << 30)
let thumbnail = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 131) })
disk.storeData(thumbnail, forKey: "thumbnail")
await disk.flush()
let file = folder.appendingPathComponent(DataCache.fileName(forKey: "thumbnail"))
var cacheTimes: [Double] = [], plainTimes: [Double] = []
for _ in 0..<200 {
    let a = clock.now
    for _ in 0..<50 { precondition(disk.data(forKey: "thumbnail")?.count == 50_000) }
    let b = clock.now
    for _ in 0..<50 { precondition((try? Data(contentsOf: file))?.count == 50_000) }
    let c = clock.now
    cacheTimes.append(nanoseconds(a.duration(to: b)) / 50)
    plainTimes.append(nanoseconds(b.duration(to: c)) / 50)
}
print(String(format: "DataCache hit of 50 KB: median %.1f µs; plain read (Data(contentsOf:)) %.1f µs; ratio %.2f (goal ≤ 1.2)",
             median(cacheTimes) / 1000, median(plainTimes) / 1000, median(cacheTimes) / median(plainTimes)))

// MARK: - A sweep of 100,000 entries

let sweepFolder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-pipeline-sweep-\(UUID().uuidString)")
let writer = try DataCache(path: sweepFolder, sizeLimit: 1 << 40)
let entry = Data(count: 100)
for index in 0..<100_000 { writer.storeData(entry, forKey: "entry-\(index)") }
await writer.flush()
let sweeper = try DataCache(path: sweepFolder, sizeLimit: 5_000_000)  // 10,000,000 bytes on disk: half must go
let sweepStart = clock.now
await sweeper.sweep()
let sweepTime = nanoseconds(sweepStart.duration(to: clock.now)) / 1e9
let left = sweeper.totalSize
// The same folder swept again, now under its limit: the listing alone (35,000 entries).
let listStart = clock.now
await sweeper.sweep()
let listTime = nanoseconds(listStart.duration(to: clock.now)) / 1e9
// What the kernel takes to unlink as many files by hand, on one thread, for comparison: 100,000
// files of 100 bytes in a folder of their own, 65,000 of them unlinked by name in the folder.
let plainFolder = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-pipeline-unlink-\(UUID().uuidString)").path
mkdir(plainFolder, 0o755)
let plainDirectory = open(plainFolder, O_RDONLY | O_DIRECTORY)
for index in 0..<100_000 {
    let fd = openat(plainDirectory, "\(index)", O_WRONLY | O_CREAT | O_EXCL, 0o644)
    _ = entry.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
let unlinkStart = clock.now
for index in 0..<65_000 { _ = unlinkat(plainDirectory, "\(index)", 0) }
let unlinkTime = nanoseconds(unlinkStart.duration(to: clock.now)) / 1e9
close(plainDirectory)
try? FileManager.default.removeItem(atPath: plainFolder)
print(String(format: "DataCache sweep of 100,000 entries: %.2f s (goal ≤ 1 s), %d entries left (%d bytes ≤ 0.7 × 5,000,000); "
             + "listing 35,000 alone %.2f s; 65,000 unlinkat() calls by hand on one thread %.2f s (sweep ÷ those %.2f)",
             sweepTime, left.count, left.bytes, listTime, unlinkTime, sweepTime / unlinkTime))
try? FileManager.default.removeItem(at: folder)
try? FileManager.default.removeItem(at: sweepFolder)

// MARK: - A 10 MB download cut at 90%, resumed

/// Fetches a 10 MB body cut at 9,000,000 bytes, then again; returns the share of the body the
/// second request asked for (its `Range`).
func refetchedShare(drip: (bytes: Int, interval: TimeAmount)?) async throws -> Double {
    let server = try await TestHTTPServer()
    let body = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(count: 10_000_000 - 4)
    server.serve("/big.jpg", .init(data: body, etag: "\"big\"", cutAfter: 9_000_000, drip: drip))
    var configuration = ImagePipeline.Configuration(imageCache: nil)
    configuration.rateLimit = nil
    let pipeline = ImagePipeline(configuration: configuration)
    let request = ImageRequest(url: server.url("/big.jpg"))
    _ = try? await pipeline.data(for: request)
    let (second, _) = try await pipeline.data(for: request)
    precondition(second == body)
    let range = server.requests(for: "/big.jpg").last?.range
    await server.shutdown()
    let kept = range.flatMap { Int($0.dropFirst(6).dropLast()) } ?? 0
    return Double(body.count - kept) / Double(body.count)
}

let paced = try await refetchedShare(drip: (65_536, .milliseconds(2)))
let flooded = try await refetchedShare(drip: nil)
print(String(format: "10 MB cut at 90%%, resumed: %.1f%% of the bytes fetched again at 32 MB/s, %.1f%% when loopback floods the client (goal ≤ 11%%)",
             paced * 100, flooded * 100))

// MARK: - 1,000 thumbnail requests over 200 URLs

if let photos = ThousandRequests.photos() {
    print(try await SharedVariants.run(photo: try Data(contentsOf: photos[0])))
    try ThousandRequests.compare(photoCount: photos.count)
} else {
    print("1,000 requests over 200 URLs: skipped (no photographs: pass --photos DIR, or run NukePipeline/bench.sh, which fetches them)")
}
