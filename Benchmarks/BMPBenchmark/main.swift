import Foundation
import NukeBMP
import NukeCore

// Times NukeBMP's read and decode of one file in process, as `Image.open(path).load()` is timed
// in Pillow: Benchmarks/Thumbnails/bmp-vs-pillow.py runs it and prints the ratio.
//
//     NukeBMPBenchmark FILE [ROUNDS]
//
// Prints `median_seconds=…` and `min_seconds=…` with the default heap allocator,
// `hugepages_median_seconds=…` with the allocator `nuke` uses (pixel buffers of 8 MB or more
// mapped with MADV_HUGEPAGE: a 36 MB buffer from malloc is a fresh mmap, faulted in 4 KB pages
// on every decode), the decoded size and format, and the sum of the decoded samples (the script
// checks it against Pillow's pixels).
let arguments = CommandLine.arguments
guard arguments.count >= 2, let data = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: NukeBMPBenchmark FILE [ROUNDS]\n".utf8))
    exit(2)
}
let rounds = arguments.count >= 3 ? max(1, Int(arguments[2]) ?? 9) : 9
let registry = ImageDecoderRegistry(codecs: [.bmp])
var context = registry.makeContext(for: data)
context.limits = .unlimited
/// The `nuke` CLI's allocator (Sources/nuke/PixelAllocator+HugePages.swift).
let hugePages = PixelAllocator { byteCount, zeroed in
    guard byteCount >= 8 << 20,
          let region = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), region != MAP_FAILED else {
        return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
    }
    _ = madvise(region, byteCount, MADV_HUGEPAGE)
    return PixelStorage(adopting: region, byteCount: byteCount) { _ = munmap($0.baseAddress, $0.count) }
}

/// Each round reads the file and decodes it, as Pillow's `Image.open(path).load()` does.
func sortedTimes(_ context: ImageDecodingContext) throws -> [Double] {
    var times: [Double] = []
    let clock = ContinuousClock()
    let url = URL(fileURLWithPath: arguments[1])
    for _ in 0..<rounds {
        let elapsed = try clock.measure {
            var round = context
            round.data = try Data(contentsOf: url, options: .alwaysMapped)   // as Pillow reads an uncompressed file: mmap
            _ = try registry.decode(round)
        }
        times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return times.sorted()
}

do {
    let warm = try registry.decode(context).image.bitmap
    let times = try sortedTimes(context)
    var huge = context
    huge.allocator = hugePages
    let hugeTimes = try sortedTimes(huge)
    var sum: UInt64 = 0
    for byte in warm.packedBytes { sum &+= UInt64(byte) }
    print("median_seconds=\(times[times.count / 2])")
    print("min_seconds=\(times[0])")
    print("hugepages_median_seconds=\(hugeTimes[hugeTimes.count / 2])")
    print("size=\(warm.width)x\(warm.height) format=\(warm.pixelFormat)")
    print("sample_sum=\(sum)")
} catch {
    FileHandle.standardError.write(Data("NukeBMPBenchmark: \(error)\n".utf8))
    exit(1)
}
