// The processing targets of issue 31, as ratios measured in one run (the machine is shared and
// noisy: only ratios mean anything):
//
//   fill ÷ fit    a 12 MP JPEG decoded to a 256 × 256 fill (Resize with crop, planned into the
//                 decode: aspect-fill target, libjpeg's DCT scaling, then a centre crop) against
//                 the same decode fitted into 256 × 256                               goal ≤ 1.05
//   blur ÷ Pillow GaussianBlur σ 4 on a 1000 × 1000 RGB image against Pillow's
//                 `ImageFilter.GaussianBlur(4)` on the same pixels, in its own process,
//                 best of the same number of runs                                     goal ≤ 1.0
//
// Usage: swift run -c release NukeProcessingBenchmark [--jpeg PATH] [--rounds N]
// Without --jpeg, a synthetic 4000 × 3000 photo-like image is encoded with libjpeg (quality 85).
import Foundation
import NukeCore
import NukeJPEG
import NukePixels
import NukeProcessing

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let rounds = option("--rounds").flatMap(Int.init) ?? 15

/// Gradients, waves and hashed noise: enough detail that the JPEG is not trivially small.
func photo(width: Int, height: Int) -> Bitmap {
    Bitmap(width: width, height: height, pixelFormat: .rgb8) { out in
        for y in 0..<height {
            for x in 0..<width {
                var h = UInt32(truncatingIfNeeded: x &* 73856093 ^ y &* 19349663)
                h ^= h >> 16; h = h &* 0x045D9F3B; h ^= h >> 16
                let noise = Int(h % 33) - 16
                let p = (y * width + x) * 3
                out[p] = UInt8(clamping: 30 + 150 * x / width + abs((3 * x + 2 * y) % 96 - 48) + noise)
                out[p + 1] = UInt8(clamping: 30 + 150 * y / height + abs((2 * x + 5 * y) % 64 - 32) + noise)
                out[p + 2] = UInt8(clamping: 200 - 150 * (x + y) / (width + height) + abs((x + 5 * y) % 40 - 20) + noise)
            }
        }
    }
}

/// The median of `rounds` timings of each body, in seconds, after one warm-up run each; the
/// bodies take turns, in alternating order, so that neither always runs on a warmer cache.
func medians(_ bodies: [() throws -> Void]) throws -> [Double] {
    for body in bodies { try body() }
    let clock = ContinuousClock()
    var samples = Array(repeating: [Double](), count: bodies.count)
    for round in 0..<rounds {
        for index in round.isMultiple(of: 2) ? Array(bodies.indices) : bodies.indices.reversed() {
            let elapsed = try clock.measure(bodies[index])
            samples[index].append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }
    return samples.map { $0.sorted()[$0.count / 2] }
}

func report(_ name: String, _ ratio: Double, goal: Double, detail: String) {
    print(String(format: "%@  %-44@ %6.3f   goal ≤ %.2f   (%@)", ratio <= goal ? "✓" : "✗", name as NSString, ratio, goal, detail as NSString))
}

// MARK: - Fill against fit

let jpeg: Data
if let path = option("--jpeg") {
    guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
    jpeg = data
} else {
    jpeg = try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.85)).encode(Image(bitmap: photo(width: 4000, height: 3000)))
}
let box = ImageSize(width: 256, height: 256)
let registry = ImageDecoderRegistry.shared
var fitSize = ImageSize(width: 0, height: 0), fillSize = fitSize
let times = try medians([{
    var context = registry.makeContext(for: jpeg)
    context.targetSize = box
    context.contentMode = .aspectFit
    context.appliesOrientation = true
    let image = try registry.decode(context).image
    fitSize = ImageSize(width: image.width, height: image.height)
}, {
    let image = try registry.decode(registry.makeContext(for: jpeg), processors: [ImageProcessors.Resize(size: box, crop: true)]).image
    fillSize = ImageSize(width: image.width, height: image.height)
}])
let (fit, fill) = (times[0], times[1])
report("12 MP JPEG → 256×256 fill ÷ fit", fill / fit, goal: 1.05,
       detail: String(format: "fill %.1f ms → %@, fit %.1f ms → %@, median of %d", fill * 1000, "\(fillSize)", fit * 1000, "\(fitSize)", rounds))

// MARK: - Gaussian blur against Pillow

let side = 1000
let source = photo(width: side, height: side)
let blur = try medians([{ _ = source.blurred(sigma: 4) }])[0]
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-blur-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let ppm = directory.appendingPathComponent("source.ppm")
try (Data("P6\n\(side) \(side)\n255\n".utf8) + Data(source.packedBytes)).write(to: ppm)
let script = """
import sys, time
from PIL import Image, ImageFilter
im = Image.open(sys.argv[1]); im.load()
im.filter(ImageFilter.GaussianBlur(4))
samples = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); im.filter(ImageFilter.GaussianBlur(4)); samples.append(time.perf_counter() - t)
samples.sort(); print(samples[len(samples) // 2])
"""
let process = Process()
process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
process.arguments = ["python3", "-c", script, ppm.path, String(rounds)]
let pipe = Pipe()
process.standardOutput = pipe
try process.run()
let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
process.waitUntilExit()
if let pillow = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) {
    report("GaussianBlur σ 4, 1 MP RGB ÷ Pillow", blur / pillow, goal: 1.0,
           detail: String(format: "nuke %.1f ms, Pillow %.1f ms, median of %d", blur * 1000, pillow * 1000, rounds))
} else {
    print("✗  Pillow did not run (python3 with Pillow needed): \(output)")
}
