import Foundation
import NukeConformance
import NukeCore
import NukePixels
import NukeWebP
import Testing

@Suite struct ImageEncodersWebPTests {
    func decode(_ data: Data) throws -> ImageContainer {
        try ImageDecoderRegistry.shared.decode(data)
    }

    func fixtureImage(_ name: String) throws -> Image {
        try decode(try WebPTestPaths.fixture(name)).image
    }

    @Test func lossyQualityTradesSizeForFidelity() throws {
        // A smooth gradient: 4:2:0 chroma keeps it, so high quality is close.
        var bytes: [UInt8] = []
        for y in 0..<48 { for x in 0..<64 { bytes += [UInt8(x * 4), UInt8(y * 5), UInt8((x + y) * 2)] } }
        let image = Image(bitmap: Bitmap(width: 64, height: 48, pixelFormat: .rgb8, bytes: bytes))
        let low = try ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.2)).encode(image)
        let high = try ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.95)).encode(image)
        #expect(ImageType(low) == .webp && ImageType(high) == .webp)
        #expect(low.count < high.count)
        let lowPSNR = ImageComparison(try decode(low).image.bitmap, reference: image.bitmap).psnr
        let highPSNR = ImageComparison(try decode(high).image.bitmap, reference: image.bitmap).psnr
        #expect(highPSNR > lowPSNR)
        #expect(highPSNR > 30, "\(highPSNR)")
    }

    /// Lossless keeps every pixel, alpha and the colour under transparent pixels included.
    @Test(arguments: ["lossless.webp", "lossless-alpha.webp", "lossy-alpha.webp"])
    func losslessIsExact(_ name: String) throws {
        let image = try fixtureImage(name)
        let encoded = try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(image)
        let decoded = try decode(encoded).image.bitmap
        #expect(decoded == image.bitmap)
    }

    @Test func methodIsTheCompressionLevel() throws {
        let image = try fixtureImage("lossy-q20-m6.webp")
        let fast = try ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.8, compressionLevel: 0)).encode(image)
        let slow = try ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.8, compressionLevel: 6)).encode(image)
        #expect(fast != slow)
    }

    @Test func metadataSurvives() throws {
        let image = try fixtureImage("metadata.webp")
        for lossless in [false, true] {
            let encoded = try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: lossless)).encode(image)
            let decoded = try decode(encoded).image
            #expect(decoded.iccProfile == image.iccProfile)
            #expect(decoded.exif == image.exif)
            #expect(decoded.xmp == image.xmp)
            #expect(decoded.orientation == .right)
        }
    }

    @Test func premultipliedAndSixteenBitInputAreConverted() throws {
        let image = try fixtureImage("lossless-alpha.webp")
        var premultiplied = image
        premultiplied.bitmap = image.bitmap.premultiplied()
        let decoded = try decode(try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(premultiplied)).image.bitmap
        // Unpremultiplying loses precision at low alpha: compare visible pixels loosely.
        #expect(ImageComparison(decoded, reference: image.bitmap.premultiplied().unpremultiplied()).maxDifference <= 1)
        var wide = try fixtureImage("lossless.webp")
        wide.bitmap = wide.bitmap.converted(to: .rgb16)
        let fromWide = try decode(try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(wide)).image.bitmap
        #expect(fromWide == (try fixtureImage("lossless.webp")).bitmap)
    }

    /// An animation transcoded lazily (one frame at a time) plays the same canvases.
    @Test(arguments: ["anim-dispose-blend.webp", "anim-img2webp.webp"])
    func animationRoundTrip(_ name: String) throws {
        let source = try decode(try WebPTestPaths.fixture(name))
        let animation = try #require(source.animation)
        let encoded = try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(animation)
        let decoded = try decode(encoded)
        let copy = try #require(decoded.animation)
        #expect(copy.frameCount == animation.frameCount)
        #expect(copy.loopCount == animation.loopCount)
        #expect(copy.frameInfos.map(\.duration) == animation.frameInfos.map(\.duration))
        let original = try animation.allFrames(limits: .unlimited), again = try copy.allFrames(limits: .unlimited)
        for (index, (a, b)) in zip(original, again).enumerated() {
            #expect(a.bitmap.visibleDifferences(from: b.bitmap) == 0, "frame \(index)")
        }
    }

    /// An image with several frames (an eager animation) encodes as an animated WebP.
    @Test func eagerFramesEncodeAsAnimation() throws {
        let red = Bitmap(width: 4, height: 3, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: 48).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 })
        let blue = Bitmap(width: 4, height: 3, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: 48).enumerated().map { $0.offset % 4 >= 2 ? 255 : 0 })
        let image = Image(frames: [ImageFrame(bitmap: red, duration: 0.25), ImageFrame(bitmap: blue, duration: 0.5)], loopCount: 2)
        let decoded = try decode(try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(image))
        let animation = try #require(decoded.animation)
        #expect(animation.frameInfos.map(\.duration) == [0.25, 0.5])
        #expect(animation.loopCount == 2)
        #expect(try animation.frame(at: 1).canvas == blue)
    }

    /// A 64 × 48 textured canvas with a translucent band, and a 6 × 5 square at `(x, y)`.
    static func canvasWithSquare(x: Int, y: Int, shade: Int) -> Bitmap {
        Bitmap(width: 64, height: 48, pixelFormat: .rgba8) { out in
            for py in 0..<48 {
                for px in 0..<64 {
                    let p = (py * 64 + px) * 4
                    let inSquare = (x..<(x + 6)).contains(px) && (y..<(y + 5)).contains(py)
                    let noise = (px &* 7919 ^ py &* 104_729) % 29
                    out[p] = UInt8(inSquare ? shade : (px * 3 + noise) % 256)
                    out[p + 1] = UInt8(inSquare ? 255 - shade : (py * 5 + noise) % 256)
                    out[p + 2] = UInt8(inSquare ? 40 : (px + py + 2 * noise) % 256)
                    out[p + 3] = py >= 40 && !inSquare ? 128 : 255
                }
            }
        }
    }

    /// Frames that change in a small region are stored as small rectangles at even offsets,
    /// and play back as the frames given, with their durations and loop count.
    @Test(arguments: [true, false])
    func animationStoresChangedRectangles(lossless: Bool) throws {
        let durations = [0.05, 0.1, 0.02, 0.5, 0.07, 0.04, 1.2, 0.03]
        // Odd offsets, and a last square in the translucent band.
        let squares = [(3, 7), (9, 10), (15, 13), (21, 16), (27, 19), (33, 22), (39, 25), (45, 39)]
        let frames = zip(squares, durations).enumerated().map { index, element in
            ImageFrame(bitmap: Self.canvasWithSquare(x: element.0.0, y: element.0.1, shade: 30 * index), duration: element.1)
        }
        let options = ImageEncodingOptions(quality: 0.9, isLossless: lossless)
        let encoded = try ImageEncoders.WebP(options: options).encode(Image(frames: frames, loopCount: 3))
        let animation = try #require(try decode(encoded).animation)
        #expect(animation.frameCount == frames.count)
        #expect(animation.loopCount == 3)
        #expect(animation.frameInfos.map(\.duration) == durations)
        // Frame 0 is the canvas; each other one the rectangle around the square before and the
        // new one, its corner moved up and left to even coordinates.
        let rectangles = [[0, 0, 64, 48]] + zip(squares, squares.dropFirst()).map { a, b in
            let x = min(a.0, b.0) & ~1, y = min(a.1, b.1) & ~1
            return [x, y, max(a.0, b.0) + 6 - x, max(a.1, b.1) + 5 - y]
        }
        #expect(animation.frameInfos.map { [$0.x, $0.y, $0.width, $0.height] } == rectangles)
        var stills = 0
        for (index, (frame, played)) in zip(frames, try animation.allFrames(limits: .unlimited)).enumerated() {
            let still = try ImageEncoders.WebP(options: options).encode(Image(bitmap: frame.bitmap))
            stills += still.count
            if lossless {
                #expect(played.bitmap.converted(to: .rgba8) == frame.bitmap, "frame \(index)")
            } else {
                // As close as the frame encoded on its own.
                let psnr = ImageComparison(played.bitmap, reference: frame.bitmap).psnr
                let stillPSNR = ImageComparison(try decode(still).image.bitmap, reference: frame.bitmap).psnr
                #expect(psnr > stillPSNR - 0.5 && psnr > 25, "frame \(index): \(psnr) dB, \(stillPSNR) dB on its own")
            }
        }
        #expect(encoded.count * 3 < stills, "\(encoded.count) bytes against \(stills) for the frames on their own")
    }

    /// A frame the same as the one before lengthens that one: the timing is kept.
    @Test func repeatedFramesLengthenThePreviousOne() throws {
        let a = Self.canvasWithSquare(x: 2, y: 2, shade: 0), b = Self.canvasWithSquare(x: 20, y: 20, shade: 200)
        let frames = [ImageFrame(bitmap: a, duration: 0.1), ImageFrame(bitmap: a, duration: 0.25), ImageFrame(bitmap: b, duration: 0.04)]
        let encoded = try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(Image(frames: frames))
        let animation = try #require(try decode(encoded).animation)
        #expect(animation.frameInfos.map(\.duration) == [0.35, 0.04])
        #expect(animation.loopCount == 0)
        #expect(try animation.frame(at: 1).canvas == b)
    }

    /// Streamed, the animation is the same file, handed over a frame at a time: the stream never
    /// gets more than one frame's chunk at once, and only the header is written again, at the end.
    @Test(arguments: [true, false])
    func streamedAnimationIsTheSameFileWrittenAsItGrows(lossless: Bool) throws {
        let durations = [0.05, 0.1, 0.02, 0.5, 0.07, 0.04, 1.2, 0.03]
        let frames = durations.enumerated().map { index, duration in
            ImageFrame(bitmap: Self.canvasWithSquare(x: 3 + 6 * index, y: 7 + 3 * index, shade: 30 * index), duration: duration)
        }
        let source = try ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true)).encode(Image(frames: frames, loopCount: 2))
        let animation = try #require(try decode(source).animation)
        let encoder = ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.9, isLossless: lossless))
        let whole = try encoder.encode(animation)

        var stream = RecordingStream(data: Data("prefix".utf8))
        try encoder.encode(animation, to: &stream)
        #expect(stream.data == Data("prefix".utf8) + whole)
        // The header once the first frame is in, each frame but the last as the next one comes,
        // the last frame's chunk at the end; then the 44-byte header again, at the stream's start.
        #expect(stream.writes.count == 1 + 7 + 1, "\(stream.writes)")
        #expect(stream.writes.first == 44)
        #expect(stream.writes.last! < whole.count / 8, "\(stream.writes) of \(whole.count) bytes")
        #expect(stream.overwrites.count == 1 && stream.overwrites[0].offset == 6 && stream.overwrites[0].count == 44, "\(stream.overwrites)")
        let played = try #require(try decode(whole).animation)
        #expect(played.frameInfos.map(\.duration) == durations)
        #expect(played.loopCount == 2)
    }

    @Test func defaultEncoderPrefersWebPWhenAsked() throws {
        let image = try fixtureImage("lossy.webp")
        #expect(ImageEncoders.Default().preferredType(for: image) == .jpeg)
        let encoder = ImageEncoders.Default(isWebPPreferred: true)
        #expect(encoder.preferredType(for: image) == .webp)
        #expect(ImageType(try encoder.encode(image)) == .webp)
    }

    @Test func framesThatAreNotWholeCanvasesAreRefused() throws {
        let a = Bitmap(width: 4, height: 4, pixelFormat: .rgba8, bytes: [UInt8](repeating: 255, count: 64))
        let b = Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 255, count: 16))
        let image = Image(frames: [ImageFrame(bitmap: a), ImageFrame(bitmap: b)])
        let error = try #require(throws: ImageCodecError.self) { try ImageEncoders.WebP().encode(image) }
        #expect(error.code == .encodingFailed)
        #expect(error.format == .webp)
    }
}

extension Bitmap {
    /// Pixels that differ between two RGBA8 bitmaps, counting fully transparent pixels as equal
    /// whatever their colour; `nil` when the sizes differ.
    func visibleDifferences(from other: Bitmap) -> Int? {
        guard width == other.width, height == other.height else { return nil }
        let a = converted(to: .rgba8).packedBytes, b = other.converted(to: .rgba8).packedBytes
        var count = 0
        for i in stride(from: 0, to: a.count, by: 4) {
            if a[i + 3] == 0 && b[i + 3] == 0 { continue }
            if a[i] != b[i] || a[i + 1] != b[i + 1] || a[i + 2] != b[i + 2] || a[i + 3] != b[i + 3] { count += 1 }
        }
        return count
    }
}

/// A ``DataOutputStream`` that records the size of each write and each overwrite.
struct RecordingStream: SeekableImageOutputStream {
    var data: Data
    var writes: [Int] = []
    var overwrites: [(offset: Int, count: Int)] = []

    var position: Int { data.count }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        writes.append(bytes.count)
        data.append(contentsOf: bytes)
    }

    mutating func overwrite(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        overwrites.append((offset, bytes.count))
        var stream = DataOutputStream(data: data)
        stream.overwrite(bytes, at: offset)
        data = stream.data
    }
}
