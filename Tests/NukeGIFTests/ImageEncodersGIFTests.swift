import Foundation
import NukeCore
import NukePixels
import Testing
@testable import NukeGIF

@Suite("ImageEncoders.GIF")
struct ImageEncodersGIFTests {
    /// A `width × height` RGBA bitmap with `colors` distinct opaque colours and, when asked, a
    /// transparent column.
    static func bitmap(width: Int, height: Int, colors: Int, transparentColumn: Bool = false) -> Bitmap {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let n = (y * width + x) % colors
                let transparent = transparentColumn && x == 0
                bytes += [UInt8(n % 16 * 16), UInt8(n / 16 % 16 * 16), UInt8((n / 256) * 64 + 7), transparent ? 0 : 255]
            }
        }
        return Bitmap(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    /// `bitmap` with fully transparent pixels zeroed, as the decoder returns them.
    static func normalized(_ bitmap: Bitmap) -> Bitmap {
        var bytes = bitmap.packedBytes
        for i in stride(from: 0, to: bytes.count, by: 4) where bytes[i + 3] < 128 {
            bytes[i] = 0; bytes[i + 1] = 0; bytes[i + 2] = 0; bytes[i + 3] = 0
        }
        return Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: .rgba8, bytes: bytes)
    }

    @Test("256 colours or fewer round-trip exactly", arguments: [(1, false), (2, true), (255, true), (256, false)])
    func exactRoundTrip(colors: Int, transparent: Bool) throws {
        let source = Self.bitmap(width: 40, height: 20, colors: colors, transparentColumn: transparent)
        let data = try ImageEncoders.GIF().encode(Image(bitmap: source))
        let decoded = try ImageDecoders.GIF().decode(data)
        #expect(decoded.image.bitmap == Self.normalized(source))
        #expect(decoded.animation == nil)
    }

    @Test("more than 256 colours are quantised within a small error")
    func quantised() throws {
        var bytes: [UInt8] = []
        for y in 0..<64 {
            for x in 0..<64 { bytes += [UInt8(x * 4), UInt8(y * 4), UInt8((x + y) * 2), 255] }
        }
        let source = Bitmap(width: 64, height: 64, pixelFormat: .rgba8, bytes: bytes)
        let decoded = try ImageDecoders.GIF().decode(try ImageEncoders.GIF().encode(Image(bitmap: source))).image.bitmap
        let a = source.packedBytes, b = decoded.packedBytes
        var total = 0
        var worst = 0
        for i in 0..<a.count {
            let d = abs(Int(a[i]) - Int(b[i]))
            total += d
            worst = max(worst, d)
        }
        let mean = Double(total) / Double(a.count)
        // giflib's median cut over this 4,096-colour ramp: mean 5.4, worst 46 (measured).
        #expect(mean < 6, "mean error \(mean)")
        #expect(worst < 64, "worst error \(worst)")
    }

    @Test("animations keep frames, durations and the loop count")
    func animation() throws {
        let frames = (0..<4).map { i in
            ImageFrame(bitmap: Self.bitmap(width: 12, height: 9, colors: 3 + i * 20, transparentColumn: i % 2 == 1), duration: Double(i + 1) * 0.05)
        }
        let image = Image(frames: frames, loopCount: 3)
        let data = try ImageEncoders.GIF().encode(image)
        let animation = try #require(try ImageDecoders.GIF().decode(data).animation)
        #expect(animation.loopCount == 3)
        #expect(animation.frameInfos.map(\.duration) == [0.05, 0.1, 0.15, 0.2])
        let decoded = try animation.allFrames()
        #expect(decoded.map(\.bitmap) == frames.map { Self.normalized($0.bitmap) })
        // Re-encoding the lazy animation gives the same frames again.
        let again = try #require(try ImageDecoders.GIF().decode(try ImageEncoders.GIF().encode(animation)).animation)
        #expect(try again.allFrames().map(\.bitmap) == decoded.map(\.bitmap))
        #expect(again.loopCount == 3)
    }

    /// Streamed, an animation is the same file, handed over a frame at a time: the header and
    /// first frame, each later frame, then the trailer; nothing is written twice.
    @Test("an animation streams into an output stream frame by frame")
    func streamedAnimation() throws {
        let frames = (0..<5).map { i in
            ImageFrame(bitmap: Self.bitmap(width: 12, height: 9, colors: 3 + i * 20, transparentColumn: i % 2 == 1), duration: Double(i + 1) * 0.05)
        }
        let animation = try #require(try ImageDecoders.GIF().decode(try ImageEncoders.GIF().encode(Image(frames: frames, loopCount: 2))).animation)
        let whole = try ImageEncoders.GIF().encode(animation)
        var stream = CountingStream(data: Data("prefix".utf8))
        try ImageEncoders.GIF().encode(animation, to: &stream)
        #expect(stream.data == Data("prefix".utf8) + whole)
        #expect(stream.writes.count == frames.count + 1, "\(stream.writes)")
        #expect(stream.writes.last == 1, "the trailer alone at the end: \(stream.writes)")
    }

    @Test("an empty image or frames of different sizes fail with encodingFailed")
    func invalid() throws {
        let empty = Bitmap(width: 0, height: 0, pixelFormat: .rgba8, bytes: [])
        #expect(throws: ImageCodecError.self) { try ImageEncoders.GIF().encode(Image(bitmap: empty)) }
        let mixed = Image(frames: [
            ImageFrame(bitmap: Self.bitmap(width: 4, height: 4, colors: 2), duration: 0.1),
            ImageFrame(bitmap: Self.bitmap(width: 5, height: 4, colors: 2), duration: 0.1),
        ])
        let error = try #require(throws: ImageCodecError.self) { try ImageEncoders.GIF().encode(mixed) }
        #expect(error.code == .encodingFailed)
    }
}

/// A stream that records the size of each write; it is never asked to write over.
struct CountingStream: SeekableImageOutputStream {
    var data: Data
    var writes: [Int] = []

    var position: Int { data.count }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        writes.append(bytes.count)
        data.append(contentsOf: bytes)
    }

    mutating func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        Issue.record("GIF wrote over \(bytes.count) bytes at \(offset)")
    }
}
