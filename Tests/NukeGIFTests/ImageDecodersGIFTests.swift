import Foundation
import NukeCore
import NukePixels
import Testing
@testable import NukeGIF

@Suite("ImageDecoders.GIF")
struct ImageDecodersGIFTests {
    private func decode(_ data: Data, limits: ImageLimits = .default) throws -> ImageContainer {
        try ImageDecoders.GIF(limits: limits).decode(data)
    }

    @Test("every frame equals ImageMagick's composited reference", .enabled(if: gifFixturesExist), arguments: GIFFixture.all)
    func framesMatchReferences(_ fixture: GIFFixture) throws {
        let container = try decode(try GIFTestPaths.fixture(fixture.name))
        #expect(container.type == .gif)
        #expect(container.image.width == fixture.canvas[0] && container.image.height == fixture.canvas[1])
        #expect(container.image.bitmap.visibleDifferences(from: try GIFTestPaths.reference(fixture.name, frame: 0)) == 0)
        guard fixture.frames > 1 else {
            #expect(container.animation == nil)
            return
        }
        let animation = try #require(container.animation)
        #expect(animation.frameCount == fixture.frames)
        #expect(animation.loopCount == (fixture.loop ?? 1))
        for (info, duration) in zip(animation.frameInfos, fixture.durations) {
            #expect(abs(info.duration - duration) < 0.0001)
        }
        let frames = try animation.makeIterator(memoryBudget: 1 << 20)
        var index = 0
        while let frame = try frames.next() {
            let reference = try GIFTestPaths.reference(fixture.name, frame: index)
            #expect(frame.canvas.visibleDifferences(from: reference) == 0, "frame \(index)")
            #expect(frame.index == index)
            index += 1
        }
        #expect(index == fixture.frames)
    }

    @Test("lazy iteration equals allFrames, and every seek equals sequential play", .enabled(if: gifFixturesExist), arguments: GIFFixture.all.filter { $0.frames > 1 })
    func lazyEqualsEager(_ fixture: GIFFixture) throws {
        let animation = try #require(try decode(try GIFTestPaths.fixture(fixture.name)).animation)
        let eager = try animation.allFrames()
        let iterator = try animation.makeIterator()
        var lazy: [Bitmap] = []
        while let frame = try iterator.next() { lazy.append(frame.canvas) }
        #expect(lazy == eager.map(\.bitmap))
        #expect(eager.map(\.duration) == animation.frameInfos.map(\.duration))
        for index in (0..<animation.frameCount).reversed() {
            #expect(try animation.frame(at: index).canvas == lazy[index], "seek to \(index)")
            try iterator.seek(to: index)
            #expect(try iterator.next()?.canvas == lazy[index], "iterator seek to \(index)")
        }
    }

    @Test("interlaced and non-interlaced encodings of one image decode alike", .enabled(if: gifFixturesExist))
    func interlaced() throws {
        let plain = try decode(try GIFTestPaths.fixture("still.gif"))
        let interlaced = try decode(try GIFTestPaths.fixture("interlaced.gif"))
        #expect(plain.image.bitmap == interlaced.image.bitmap)
        #expect(interlaced.userInfo[.isProgressiveKey] as? Bool == true)
    }

    @Test("browser durations: 0 and 10 ms show as 100 ms, 20 ms stays", .enabled(if: gifFixturesExist))
    func browserDurations() throws {
        let animation = try #require(try decode(try GIFTestPaths.fixture("tiny-delays.gif")).animation)
        #expect(animation.frameInfos.map(\.duration) == [0, 0.01, 0.02])
        #expect(animation.frameInfos.map(\.browserDuration) == [0.1, 0.1, 0.02])
    }

    @Test("disposal methods and blending are read from the graphics control extension", .enabled(if: gifFixturesExist))
    func disposal() throws {
        let animation = try #require(try decode(try GIFTestPaths.fixture("mixed-disposal.gif")).animation)
        #expect(animation.frameInfos.map(\.disposal) == [.none, .previous, .background, .none])
        #expect(animation.frameInfos.allSatisfy { $0.blending == .over })
        #expect(animation.frameInfos[1].x == 6 && animation.frameInfos[1].y == 2)
        let still = try #require(try decode(try GIFTestPaths.fixture("tiny-delays.gif")).animation)
        // Opaque full-canvas frames blend as .source and are independent.
        #expect(still.frameInfos.map(\.isIndependent) == [true, true, true])
    }

    /// A GIF with a `width × height` screen and one 1×1 image, built by hand.
    static func tinyGIF(screenWidth: Int, screenHeight: Int) -> Data {
        var bytes: [UInt8] = Array("GIF89a".utf8)
        bytes += [UInt8(screenWidth & 0xFF), UInt8(screenWidth >> 8), UInt8(screenHeight & 0xFF), UInt8(screenHeight >> 8)]
        bytes += [0x80, 0, 0] // global colour table of 2 entries
        bytes += [0, 0, 0, 255, 255, 255]
        bytes += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0] // 1×1 image at 0,0
        bytes += [2, 2, 0x4C, 0x01, 0] // LZW: clear, 1, end
        bytes += [0x3B]
        return Data(bytes)
    }

    @Test("LZW data that ends early inside a complete frame keeps the rows decoded, with a warning")
    func shortLZWData() throws {
        // A 1×2 screen and image whose LZW data holds one pixel: row 1 is missing.
        var bytes = [UInt8](Self.tinyGIF(screenWidth: 1, screenHeight: 2))
        bytes[13 + 6 + 7] = 2 // image height 2
        let container = try ImageDecoders.GIF().decode(Data(bytes))
        let bitmap = container.image.bitmap
        #expect(bitmap.sample(x: 0, y: 0, channel: 3) == 255)
        #expect(bitmap.sample(x: 0, y: 0, channel: 0) == 255)
        #expect(bitmap.sample(x: 0, y: 1, channel: 3) == 0)
        #expect((container.userInfo[.warningsKey] as? ImageDecodingWarnings)?.count == 1)
    }

    @Test("a huge screen fails with limitExceeded before any pixel is allocated")
    func hugeScreen() throws {
        let data = Self.tinyGIF(screenWidth: 65535, screenHeight: 65535)
        let limits = ImageLimits(maxPixelCount: 10_000_000)
        #expect(throws: ImageCodecError.self) { try decode(data, limits: limits) }
        do {
            _ = try decode(data, limits: limits)
        } catch let error as ImageCodecError {
            #expect(error.code == .limitExceeded)
            #expect(error.format == .gif)
        }
        // The same file decodes with its 1×1 image clipped onto a small screen.
        let small = try decode(Self.tinyGIF(screenWidth: 3, screenHeight: 2))
        #expect(small.image.width == 3 && small.image.height == 2)
        #expect(small.image.bitmap.sample(x: 0, y: 0, channel: 3) == 255)
        #expect(small.image.bitmap.sample(x: 1, y: 0, channel: 3) == 0)
    }

    @Test("a zero-size screen is corrupt, naming GIF and the reason")
    func zeroScreen() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(Self.tinyGIF(screenWidth: 0, screenHeight: 5)) }
        #expect(error.code == .corrupt)
        #expect(error.description.contains("GIF"))
        #expect(error.message.contains("0×5"))
    }

    @Test("not a GIF is corrupt; no image is corrupt")
    func invalid() throws {
        #expect(ImageDecoders.GIF(data: Data("hello".utf8), context: ImageDecodingContext(data: Data("hello".utf8))) == nil)
        var noImage = Array(Self.tinyGIF(screenWidth: 2, screenHeight: 2).prefix(19))
        noImage.append(0x3B)
        let error = try #require(throws: ImageCodecError.self) { try decode(Data(noImage)) }
        #expect(error.code == .corrupt)
    }

    @Test("Pillow's decompression bomb fails with limitExceeded", .enabled(if: FileManager.default.fileExists(atPath: GIFTestPaths.pillowBomb.path)))
    func decompressionBomb() throws {
        let data = try Data(contentsOf: GIFTestPaths.pillowBomb)
        let limits = ImageLimits(maxPixelCount: 89_478_485 / 2) // Pillow's default bomb threshold
        let error = try #require(throws: ImageCodecError.self) { try decode(data, limits: limits) }
        #expect(error.code == .limitExceeded)
    }

    @Test("truncation at every prefix: an incomplete error, never a crash", .enabled(if: gifFixturesExist), arguments: ["dispose-previous.gif", "interlaced.gif"])
    func truncation(_ name: String) throws {
        let data = try GIFTestPaths.fixture(name)
        for length in 0..<(data.count - 1) {
            let prefix = data.prefix(length)
            do {
                let container = try decode(Data(prefix))
                // Data cut exactly between blocks, before the trailer, decodes the frames so far.
                #expect(container.image.width > 0)
            } catch let error as ImageCodecError {
                #expect(error.code == .incomplete || (length < 6 && error.code == .corrupt), "prefix \(length): \(error)")
            }
        }
    }

    @Test("allFrames checks the limits first and points to the lazy API", .enabled(if: gifFixturesExist))
    func allFramesLimit() throws {
        let animation = try #require(try decode(try GIFTestPaths.fixture("dispose-none.gif")).animation)
        let error = try #require(throws: ImageCodecError.self) { try animation.allFrames(limits: ImageLimits(maxFrameCount: 2)) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("makeIterator(memoryBudget:)"))
        let budget = try #require(throws: ImageCodecError.self) { try animation.makeIterator(memoryBudget: 1000) }
        #expect(budget.code == .limitExceeded)
    }

    @Test("the frame count limit applies while scanning")
    func frameCountLimit() throws {
        let data = try GIFTestPaths.fixture("dispose-none.gif")
        let error = try #require(throws: ImageCodecError.self) { try decode(data, limits: ImageLimits(maxFrameCount: 2)) }
        #expect(error.code == .limitExceeded)
    }

    @Test("parseHeader reads the logical screen")
    func parseHeader() {
        #expect(ImageDecoders.GIF.parseHeader(Self.tinyGIF(screenWidth: 300, screenHeight: 2)) == .parsed(
            ImageHeader(type: .gif, width: 300, height: 2, bitDepth: 8, componentCount: 1)))
        #expect(ImageDecoders.GIF.parseHeader(Data("GIF8".utf8)) == .needsMoreData)
        #expect(ImageDecoders.GIF.parseHeader(Data("PNG".utf8)) == .unavailable)
        #expect(ImageDecoders.GIF.parseHeader(Self.tinyGIF(screenWidth: 0, screenHeight: 2)) == .unavailable)
    }

    @Test("the codec registers itself")
    func registration() throws {
        let data = Self.tinyGIF(screenWidth: 2, screenHeight: 1)
        #expect(try ImageDecoderRegistry.shared.decode(data).type == .gif)
        #expect(ImageEncoderRegistry.shared.encoder(for: .gif) is ImageEncoders.GIF)
        #expect(ImageCodec.gif.info.type == .gif)
        #expect(ImageCodec.gif.info.libraryVersion == "5.2.1")
        #expect(ImageCodec.gif.info.capabilities.contains(.animation))
    }

    @Test("cancellation stops the lazy frames", .enabled(if: gifFixturesExist))
    func cancellation() throws {
        let cancellation = ImageDecodingCancellation()
        let decoder = ImageDecoders.GIF(cancellation: cancellation)
        let animation = try #require(try decoder.decode(try GIFTestPaths.fixture("dispose-none.gif")).animation)
        let frames = try animation.makeIterator()
        _ = try frames.next()
        cancellation.cancel()
        let error = try #require(throws: ImageCodecError.self) { try frames.next() }
        #expect(error.code == .cancelled)
    }
}

@Suite("ImageDecoders.GIF cancellation within a frame")
struct ImageDecodersGIFRowCancellationTests {
    @Test("a frame stops between rows once cancelled, and the handle decodes the next frame")
    func cancelledBetweenRows() throws {
        // A 300×300 two-frame animation from the encoder. Cancelling from another thread is
        // racy, so cancel before the call: the shim's row callback sees it at row 63.
        let frame = Bitmap(width: 300, height: 300, pixelFormat: .rgba8, bytes: [UInt8](repeating: 200, count: 300 * 300 * 4))
        let data = try ImageEncoders.GIF().encode(Image(frames: [ImageFrame(bitmap: frame, duration: 0.1), ImageFrame(bitmap: frame, duration: 0.1)]))
        var scanner = GIFScanner()
        try scanner.scan(data, limits: .default)
        let handle = try GIFDecoderHandle()
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let error = try #require(throws: ImageCodecError.self) {
            try handle.decodeFrame(scanner.frames[0], index: 0, in: data, cancellation: cancellation)
        }
        #expect(error.code == .cancelled)
        #expect(error.message.contains("after 63 rows"))
        let decoded = try handle.decodeFrame(scanner.frames[1], index: 1, in: data, cancellation: nil)
        #expect(decoded.sample(x: 299, y: 299, channel: 0) == 200)
    }
}
