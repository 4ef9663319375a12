import Foundation
import NukeCore
import NukePixels
import NukeProcessing
import Testing

/// Rounded corners and circles are checked by coverage: the alpha of every pixel adds up to the
/// shape's analytic area, each pixel holding its exact coverage rounded to 8 bits (so the sum is
/// within half a level per edge pixel of the area).
@Suite struct RoundedCornersTests {
    static func opaque(_ width: Int, _ height: Int, format: PixelFormat = .rgb8) -> Bitmap {
        Bitmap(width: width, height: height, pixelFormat: format, bytes: [UInt8](repeating: 0xFF, count: width * height * format.bytesPerPixel))
    }

    /// The sum of alpha over the bitmap, in pixels.
    static func coveredArea(_ bitmap: Bitmap) -> Double {
        let alpha = bitmap.pixelFormat.channelCount - 1
        let maximum = bitmap.pixelFormat.bitsPerChannel == 8 ? 255.0 : 65535.0
        var sum = 0.0
        for y in 0..<bitmap.height { for x in 0..<bitmap.width { sum += Double(bitmap.sample(x: x, y: y, channel: alpha)) / maximum } }
        return sum
    }

    @Test(arguments: [(64, 48, 16.0), (50, 50, 7.5), (33, 21, 10.5), (40, 30, 0.0)])
    func roundedCornersCoverTheAnalyticArea(width: Int, height: Int, radius: Double) throws {
        let rounded = try ImageProcessors.RoundedCorners(radius: radius).process(Self.opaque(width, height))
        #expect(rounded.pixelFormat == .rgba8)
        let area = Double(width * height) - (4 - Double.pi) * radius * radius
        let edgePixels = 4 * radius * 2 + 4
        #expect(abs(Self.coveredArea(rounded) - area) <= 0.5 / 255 * edgePixels, "covered \(Self.coveredArea(rounded)), analytic \(area)")
        // The centre is untouched and the very corner transparent.
        #expect(rounded.sample(x: width / 2, y: height / 2, channel: 3) == 255)
        if radius >= 2 { #expect(rounded.sample(x: 0, y: 0, channel: 3) == 0) }
    }

    @Test func circleCoversPiRSquared() throws {
        let circle = try ImageProcessors.Circle().process(Self.opaque(80, 60))
        #expect((circle.width, circle.height) == (60, 60))
        let area = Double.pi * 30 * 30
        #expect(abs(Self.coveredArea(circle) - area) <= 0.5 / 255 * 2 * Double.pi * 30 * 2)
        // Each pixel on the edge has its own coverage: the one straddling the circle at the top.
        let edge = Double(circle.sample(x: 30, y: 0, channel: 3)) / 255
        #expect(abs(edge - Self.exactCoverage(x: 30, y: 0, radius: 30)) <= 0.5 / 255 + 1e-9)
    }

    /// The coverage of pixel (x, y) by the disc of `radius` centred at (radius, radius), by
    /// brute-force sampling on a 2,000 × 2,000 grid (independent of the analytic integral).
    static func exactCoverage(x: Int, y: Int, radius: Double) -> Double {
        let n = 2000
        var inside = 0
        for i in 0..<n {
            let px = Double(x) + (Double(i) + 0.5) / Double(n) - radius
            for j in 0..<n {
                let py = Double(y) + (Double(j) + 0.5) / Double(n) - radius
                if px * px + py * py <= radius * radius { inside += 1 }
            }
        }
        return Double(inside) / Double(n * n)
    }

    @Test func borderFillsTheRing() throws {
        let border = ImageProcessingOptions.Border(color: RGBColor(red: 255, green: 0, blue: 0), width: 4)
        let black = Bitmap(width: 60, height: 60, pixelFormat: .rgb8, bytes: [UInt8](repeating: 0, count: 60 * 60 * 3))
        let circle = try ImageProcessors.Circle(border: border).process(black)
        // Red on the ring, the image inside, nothing outside.
        #expect(circle.sample(x: 30, y: 2, channel: 0) == 255 && circle.sample(x: 30, y: 2, channel: 3) == 255)
        #expect(circle.sample(x: 30, y: 30, channel: 0) == 0 && circle.sample(x: 30, y: 30, channel: 3) == 255)
        #expect(circle.sample(x: 1, y: 1, channel: 3) == 0)
        // The red, weighted by alpha, covers the ring's area: π(30² − 26²).
        var red = 0.0
        for y in 0..<60 { for x in 0..<60 { red += Double(circle.sample(x: x, y: y, channel: 0) * circle.sample(x: x, y: y, channel: 3)) / 255 / 255 } }
        let ring = Double.pi * (30 * 30 - 26 * 26)
        // Red and alpha are each rounded to half a level on the two circles' edge pixels (about
        // 2 × 2πr of them).
        let edgePixels = 2 * 2 * Double.pi * (30 + 26)
        #expect(abs(red - ring) <= 1.0 / 255 * edgePixels, "red \(red), ring \(ring)")
    }

    @Test func alphaIsMultipliedAndFormatsKeepTheirDepth() throws {
        let half = Bitmap(width: 20, height: 20, pixelFormat: .grayAlpha16, bytes: [UInt8](repeating: 0, count: 20 * 20 * 4).enumerated().map { i, _ in
            i % 4 >= 2 ? (i % 4 == 2 ? 0xFF : 0x7F) : 0x80
        })
        let rounded = try ImageProcessors.RoundedCorners(radius: 5).process(half)
        #expect(rounded.pixelFormat == .grayAlpha16)
        #expect(rounded.sample(x: 10, y: 10, channel: 1) == half.sample(x: 10, y: 10, channel: 1))
        #expect(rounded.sample(x: 0, y: 0, channel: 1) == 0)
        let gray = try ImageProcessors.RoundedCorners(radius: 5).process(Self.opaque(20, 20, format: .gray8))
        #expect(gray.pixelFormat == .grayAlpha8)
        let premultiplied = try ImageProcessors.RoundedCorners(radius: 5).process(Self.opaque(20, 20, format: .rgba8).premultiplied())
        #expect(premultiplied.alphaMode == .premultiplied)
        // Premultiplied colour never exceeds alpha.
        for y in 0..<20 { for x in 0..<20 { #expect(premultiplied.sample(x: x, y: y, channel: 0) <= premultiplied.sample(x: x, y: y, channel: 3)) } }
    }
}
