import Foundation
import NukeCore
import NukeNetpbm
import Testing

/// Fixtures/processing (scripts/make-processing-fixtures.py) and the measures the tests compare with.
enum ProcessingFixtures {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/processing")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent(name))
    }

    static func bitmap(_ name: String) throws -> Bitmap {
        try Netpbm.decode(try data(name))
    }

    /// The largest difference between two samples of bitmaps of the same shape; `nil` when their
    /// sizes or formats differ.
    static func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int? {
        differences(a, b)?.max() ?? (a.width == b.width && a.height == b.height ? 0 : nil)
    }

    /// PSNR in dB over every sample (8-bit peak 255); `nil` when the shapes differ.
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double? {
        guard let d = differences(a, b), !d.isEmpty else { return nil }
        let mse = d.reduce(0.0) { $0 + Double($1 * $1) } / Double(d.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    private static func differences(_ a: Bitmap, _ b: Bitmap) -> [Int]? {
        guard a.width == b.width, a.height == b.height, a.pixelFormat == b.pixelFormat else { return nil }
        var out: [Int] = []
        out.reserveCapacity(a.width * a.height * a.pixelFormat.channelCount)
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<a.pixelFormat.channelCount {
                    out.append(abs(a.sample(x: x, y: y, channel: c) - b.sample(x: x, y: y, channel: c)))
                }
            }
        }
        return out
    }
}
