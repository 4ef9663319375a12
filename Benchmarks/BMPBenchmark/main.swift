import Foundation
import NukeBMP
import NukeCore

// Times NukeBMP's read and decode of one file in process, as `Image.open(path).load()` is timed
// in Pillow: Benchmarks/Thumbnails/bmp-vs-pillow.py runs it and prints the ratio.
//
//     NukeBMPBenchmark FILE [ROUNDS]
//
// Prints `median_seconds=…` and `min_seconds=…` with the default heap allocator (which maps
// buffers of 8 MB or more with MADV_HUGEPAGE), the decoded size and format, and the sum of the
// decoded samples (the script checks it against Pillow's pixels).
let arguments = CommandLine.arguments
guard arguments.count >= 2, let data = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: NukeBMPBenchmark FILE [ROUNDS]\n".utf8))
    exit(2)
}
let rounds = arguments.count >= 3 ? max(1, Int(arguments[2]) ?? 9) : 9
let registry = ImageDecoderRegistry(codecs: [.bmp])
var context = registry.makeContext(for: data)
context.limits = .unlimited
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
    var sum: UInt64 = 0
    for byte in warm.packedBytes { sum &+= UInt64(byte) }
    print("median_seconds=\(times[times.count / 2])")
    print("min_seconds=\(times[0])")
    print("size=\(warm.width)x\(warm.height) format=\(warm.pixelFormat)")
    print("sample_sum=\(sum)")
} catch {
    FileHandle.standardError.write(Data("NukeBMPBenchmark: \(error)\n".utf8))
    exit(1)
}
