import Testing
@testable import NukeCore
import NukePixels

struct BitmapTests {
    /// 3×2 RGB, each pixel's red channel its index: 0 1 2 / 3 4 5.
    static let numbered = Bitmap(width: 3, height: 2, pixelFormat: .rgb8, bytes: (0..<6).flatMap { [UInt8($0), 0, 0] })

    static func reds(_ bitmap: Bitmap) -> [Int] {
        (0..<bitmap.height).flatMap { y in (0..<bitmap.width).map { x in bitmap.sample(x: x, y: y, channel: 0) } }
    }

    @Test(arguments: [
        (ImageOrientation.up, 3, [0, 1, 2, 3, 4, 5]),
        (.upMirrored, 3, [2, 1, 0, 5, 4, 3]),
        (.down, 3, [5, 4, 3, 2, 1, 0]),
        (.downMirrored, 3, [3, 4, 5, 0, 1, 2]),
        (.leftMirrored, 2, [0, 3, 1, 4, 2, 5]),
        (.right, 2, [3, 0, 4, 1, 5, 2]),
        (.rightMirrored, 2, [5, 2, 4, 1, 3, 0]),
        (.left, 2, [2, 5, 1, 4, 0, 3]),
    ])
    func orientsLikeExif(_ orientation: ImageOrientation, width: Int, expected: [Int]) {
        let oriented = Self.numbered.oriented(orientation)
        #expect(oriented.width == width)
        #expect(Self.reds(oriented) == expected)
    }

    @Test func convertsBetweenFormats() {
        let gray = Bitmap(width: 2, height: 1, pixelFormat: .gray8, bytes: [10, 200])
        let rgba = gray.converted(to: .rgba8)
        #expect(rgba.bytes == [10, 10, 10, 255, 200, 200, 200, 255])
        #expect(rgba.alphaMode == .straight)
        let wide = gray.converted(to: .gray16)
        #expect(wide.sample(x: 1, y: 0, channel: 0) == 200 * 257)
        #expect(wide.converted(to: .gray8) == gray)
        let rgb = Bitmap(width: 1, height: 1, pixelFormat: .rgb8, bytes: [255, 0, 0])
        #expect(rgb.converted(to: .gray8).bytes == [76])  // Rec. 601: 0.299 × 255
        let sixteen = Bitmap(width: 1, height: 1, pixelFormat: .gray16, bytes: [0, 0]).withSample(0x8080)
        #expect(sixteen.converted(to: .gray8).bytes == [0x80])
    }

    @Test func premultiplicationRoundTripsOpaqueAndClearsTransparent() {
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .rgba8, bytes: [200, 100, 50, 255, 200, 100, 50, 0])
        let pre = bitmap.premultiplied()
        #expect(pre.alphaMode == .premultiplied)
        #expect(pre.bytes == [200, 100, 50, 255, 0, 0, 0, 0])
        #expect(pre.unpremultiplied().bytes == [200, 100, 50, 255, 0, 0, 0, 0])
        let half = Bitmap(width: 1, height: 1, pixelFormat: .rgba8, bytes: [200, 100, 50, 128]).premultiplied()
        #expect(half.bytes == [100, 50, 25, 128])
    }

    @Test func equalityIgnoresRowPadding() {
        let packed = Bitmap(width: 2, height: 2, pixelFormat: .gray8, bytes: [1, 2, 3, 4])
        let padded = Bitmap(width: 2, height: 2, pixelFormat: .gray8, bytesPerRow: 4, bytes: [1, 2, 99, 99, 3, 4, 98, 98])
        #expect(packed == padded)
        #expect(padded.packedBytes == [1, 2, 3, 4])
        #expect(packed != Bitmap(width: 2, height: 2, pixelFormat: .gray8, bytes: [1, 2, 3, 5]))
        #expect(packed != Bitmap(width: 4, height: 1, pixelFormat: .gray8, bytes: [1, 2, 3, 4]))
    }

    @Test func copiesOnWrite() {
        let original = Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [7])
        var copy = original
        copy.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(original.bytes == [7])
        #expect(copy.bytes == [9])
    }

    @Test func initializesStorageInPlace() {
        let bitmap = Bitmap(width: 2, height: 2, pixelFormat: .grayAlpha8) { buffer in
            #expect(buffer.count == 8)
            for i in 0..<buffer.count { buffer[i] = UInt8(i) }
        }
        #expect(bitmap.bytes == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(bitmap.alphaMode == .straight)
    }
}

extension Bitmap {
    /// A copy with the first 16-bit sample set (test helper).
    func withSample(_ value: UInt16) -> Bitmap {
        var copy = self
        copy.withUnsafeMutableBytes { $0.storeBytes(of: value, as: UInt16.self) }
        return copy
    }
}
