import Foundation
import NukeCore

/// The resampler fixtures: Pillow references (Fixtures/resampler, made by
/// scripts/make-resampler-fixtures.py) and the test pattern their sources are made from.
enum ResamplerFixtures {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/resampler")

    struct Manifest: Decodable {
        var pillow: String
        var cases: [Case]
    }

    struct Size: Decodable {
        var width: Int
        var height: Int
    }

    struct Extent: Decodable {
        var width: Double
        var height: Double
    }

    struct Case: Decodable {
        struct Source: Decodable {
            var pattern: String
            var width: Int
            var height: Int
            var alpha: Bool
            var fnv1a64: String
        }

        var name: String
        var source: Source
        var target: Size
        var contentMode: String
        var reference: String
        var referenceSize: Size
        /// For a codec's rounded-up reduction: how much of the image the source covers.
        var extent: Extent?
    }

    static func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    /// The script's `photo` pattern, sample for sample: gradients, waves, a disc, a 2-pixel
    /// checkerboard and hashed noise; with alpha, transparent red on the left fifth.
    static func photo(width: Int, height: Int, alpha: Bool) -> Bitmap {
        func tri(_ v: Int, _ period: Int) -> Int { abs(v % period - period / 2) }
        func noise(_ x: Int, _ y: Int, _ c: Int) -> Int {
            var h = (UInt32(x) &* 73_856_093) ^ (UInt32(y) &* 19_349_663) ^ UInt32((c + 1) * 83_492_791)
            h ^= h >> 16
            h = h &* 0x045D_9F3B
            h ^= h >> 16
            return Int(h % 33) - 16
        }
        let (cx, cy, radius) = (3 * width / 10, 4 * height / 10, 15 * min(width, height) / 100)
        let channels = alpha ? 4 : 3
        var bytes = [UInt8]()
        bytes.reserveCapacity(width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                var rgb = [
                    30 + 120 * x / width + tri(3 * x + 2 * y, 96),
                    30 + 120 * y / height + tri(2 * x + 3 * height - y, 64) * 3 / 2,
                    200 - 150 * (x + y) / (width + height) + tri(x + 5 * y, 40),
                ]
                let disc = (x - cx) * (x - cx) + (y - cy) * (y - cy) <= radius * radius
                if disc { rgb = [230, 200, 40] }
                if x >= 6 * width / 10, x < 9 * width / 10, y >= 55 * height / 100, y < 85 * height / 100 {
                    let checker = ((x / 2 + y / 2) % 2) * 200 + 20
                    rgb = [checker, checker, checker]
                }
                var pixel = rgb.enumerated().map { c, v in min(max(v + noise(x, y, c), 0), 255) }
                if alpha {
                    let left = width / 5
                    var a = min(max(255 * (x - left) / (width / 2), 0), 255)
                    if disc { a = 160 }
                    if x < left { pixel = [255, 0, 0] }
                    pixel.append(a)
                }
                bytes.append(contentsOf: pixel.map { UInt8($0) })
            }
        }
        return Bitmap(width: width, height: height, pixelFormat: alpha ? .rgba8 : .rgb8, bytes: bytes)
    }

    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    struct PAMError: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads an 8-bit PAM (P7) file, our own minimal reader so the tests do not depend on where
    /// NukeCore's Netpbm codec lives.
    static func readPAM(_ name: String) throws -> Bitmap {
        let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: Array("ENDHDR\n".utf8)) }) else {
            throw PAMError(description: "\(name): no ENDHDR")
        }
        let header = String(decoding: bytes[..<end], as: UTF8.self)
        var fields: [String: Int] = [:]
        for line in header.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        guard let width = fields["WIDTH"], let height = fields["HEIGHT"], let depth = fields["DEPTH"],
              fields["MAXVAL"] == 255, (1...4).contains(depth) else {
            throw PAMError(description: "\(name): unsupported header \(header)")
        }
        let pixels = Array(bytes[(end + 7)...])
        guard pixels.count == width * height * depth else { throw PAMError(description: "\(name): \(pixels.count) sample bytes") }
        let format: PixelFormat = [.gray8, .grayAlpha8, .rgb8, .rgba8][depth - 1]
        return Bitmap(width: width, height: height, pixelFormat: format, bytes: pixels)
    }

    /// Peak signal-to-noise ratio in dB over all samples (8-bit). With `premultiplied`, colour
    /// samples are compared multiplied by alpha / 255 — what is seen once composited.
    /// With `minimumAlpha`, only pixels whose alpha is at least that in both are compared.
    static func psnr(_ a: Bitmap, _ b: Bitmap, premultiplied: Bool = false, minimumAlpha: UInt8 = 0) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat)
        let channels = a.pixelFormat.channelCount
        let x = a.packedBytes, y = b.packedBytes
        var squares = 0.0
        var count = 0
        for p in stride(from: 0, to: x.count, by: channels) {
            if a.pixelFormat.hasAlpha, min(x[p + channels - 1], y[p + channels - 1]) < minimumAlpha { continue }
            count += channels
            for c in 0..<channels {
                var u = Double(x[p + c]), v = Double(y[p + c])
                if premultiplied, a.pixelFormat.hasAlpha, c < channels - 1 {
                    u *= Double(x[p + channels - 1]) / 255
                    v *= Double(y[p + channels - 1]) / 255
                }
                squares += (u - v) * (u - v)
            }
        }
        let mse = squares / Double(max(count, 1))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
