import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
@testable import NukePNG
import Testing

/// Animated PNG: frames decoded on demand through the core's animation model, composited as
/// browsers do, against Pillow's composited frames (Fixtures/apng, made by
/// scripts/make-apng-fixtures.py; Pillow's PNG reader does not use libpng).
@Suite struct APNGTests {
    struct Entry: Decodable, Sendable, CustomStringConvertible {
        var file: String
        var frames: Int?
        var loop: Int?
        var width: Int
        var height: Int
        var broken: Bool?
        var description: String { file }
    }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/apng")
    static let entries: [Entry] = {
        struct Manifest: Decodable { var fixtures: [Entry] }
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures
    }()

    func decode(_ name: String, limits: ImageLimits = .default) throws -> ImageContainer {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        return try ImageDecoderRegistry(codecs: [.png]).decode(ImageDecodingContext(data: data, limits: limits))
    }

    func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(Data(contentsOf: Self.directory.appendingPathComponent(name)))
    }

    @Test func manifestLists() {
        #expect(Self.entries.count >= 9)
    }

    @Test(arguments: entries.filter { $0.broken != true })
    func framesEqualPillows(_ entry: Entry) throws {
        let container = try decode(entry.file)
        let animation = try #require(container.animation)
        let frames = try #require(entry.frames)
        #expect(animation.frameCount == frames)
        #expect(animation.canvasSize == ImageSize(width: entry.width, height: entry.height))
        #expect(animation.loopCount == entry.loop ?? 0)
        let stem = entry.file.replacingOccurrences(of: ".png", with: "")
        let eager = try animation.allFrames(limits: .unlimited)
        for index in 0..<frames {
            let expected = try reference("\(stem).frame\(index).pam")
            #expect(eager[index].bitmap == expected, "frame \(index): max difference \(Self.maxDifference(eager[index].bitmap, expected))")
        }
        // Lazy play and seeks equal the eager frames; the container's image is frame 0.
        let iterator = try animation.makeIterator()
        var index = 0
        while let frame = try iterator.next() {
            #expect(frame.canvas == eager[index].bitmap, "lazy frame \(index)")
            index += 1
        }
        #expect(index == frames)
        #expect(try animation.frame(at: frames - 1).canvas == eager[frames - 1].bitmap)
        #expect(container.image.bitmap == eager[0].bitmap)
    }

    static func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        guard a.width == b.width, a.height == b.height, a.pixelFormat == b.pixelFormat else { return .max }
        let x = a.packedBytes, y = b.packedBytes
        return zip(x, y).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    @Test func timingAsStored() throws {
        let animation = try #require(try decode("anim-basic.png").animation)
        #expect(animation.frameInfos.map(\.duration) == [0.1, 0.05, 0.2, 0.03])
    }

    @Test(arguments: entries.filter { $0.broken == true })
    func brokenAnimationShowsTheDefaultImage(_ entry: Entry) throws {
        let container = try decode(entry.file)
        #expect(container.animation == nil)
        let stem = entry.file.replacingOccurrences(of: ".png", with: "")
        #expect(container.image.bitmap.converted(to: .rgba8) == (try reference("\(stem).default.pam")))
        let warnings = try #require(container.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.first.hasPrefix("APNG:"))
    }

    /// The warning is the plugin's report; refusing it under strict decoding is the core's
    /// verdict, the same for every plugin.
    @Test(arguments: entries.filter { $0.broken == true })
    func brokenAnimationIsRefusedWhenStrict(_ entry: Entry) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(entry.file))
        let error = try #require(throws: ImageCodecError.self) {
            try ImageDecoderRegistry(codecs: [.png]).decode(ImageDecodingContext(data: data, isStrict: true))
        }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("APNG:"), "\(error)")
    }

    @Test func frameCountOverTheLimitIsRefused() throws {
        var limits = ImageLimits.default
        limits.maxFrameCount = 3
        let error = try #require(throws: ImageCodecError.self) { try decode("anim-basic.png", limits: limits) }
        #expect(error.code == .limitExceeded)
    }

    @Test func stillPNGHasNoAnimation() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 8, height: 8, format: .rgb8)))
        let container = try ImageDecoderRegistry(codecs: [.png]).decode(data)
        #expect(container.animation == nil)
    }

    @Test(arguments: [1, 7, 4096])
    func progressiveFeedingEndsWithTheSameAnimation(_ step: Int) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("anim-dispose-previous.png"))
        let decoder = try #require(ImageDecoders.PNG(partiallyDownloadedData: data.prefix(8), context: ImageDecodingContext(data: data.prefix(8), isCompleted: false)))
        var end = step
        while end < data.count {
            _ = decoder.decodePartiallyDownloadedData(data.prefix(end))
            end += step
        }
        let container = try decoder.decode(data)
        let oneShot = try decode("anim-dispose-previous.png")
        let frames = try #require(container.animation).allFrames(limits: ImageLimits.unlimited)
        let expected = try #require(oneShot.animation).allFrames(limits: ImageLimits.unlimited)
        #expect(frames == expected)
        #expect(container.image.bitmap == oneShot.image.bitmap)
    }

    /// Encoding APNG from the animation model and decoding it again gives the same frames, timing
    /// and loop count (every frame is written whole, so the round trip is exact).
    @Test(arguments: entries.filter { $0.broken != true })
    func encodeRoundTrip(_ entry: Entry) throws {
        let animation = try #require(try decode(entry.file).animation)
        let encoded = try ImageEncoders.PNG().encode(animation)
        // Streamed a frame at a time: the same file.
        var stream = DataOutputStream()
        try ImageEncoders.PNG().encode(animation, to: &stream)
        #expect(stream.data == encoded)
        let again = try ImageDecoderRegistry(codecs: [.png]).decode(encoded)
        let decoded = try #require(again.animation)
        #expect(decoded.frameCount == animation.frameCount)
        #expect(decoded.loopCount == animation.loopCount)
        #expect(decoded.frameInfos.map(\.duration) == animation.frameInfos.map(\.duration))
        #expect(try decoded.allFrames(limits: ImageLimits.unlimited).map(\.bitmap) == animation.allFrames(limits: ImageLimits.unlimited).map(\.bitmap))
    }

    @Test func eagerImageWithFramesEncodesAsAPNG() throws {
        let frames = [PNGTestImages.gradient(width: 20, height: 10, format: .rgb8, seed: 1),
                      PNGTestImages.gradient(width: 20, height: 10, format: .rgb8, seed: 2)]
        var image = Image(frames: frames.map { ImageFrame(bitmap: $0, duration: 0.25) }, loopCount: 2)
        image.orientation = .up
        let encoded = try ImageEncoders.PNG().encode(image)
        let decoded = try #require(try ImageDecoderRegistry(codecs: [.png]).decode(encoded).animation)
        #expect(decoded.frameCount == 2 && decoded.loopCount == 2)
        let back = try decoded.allFrames(limits: ImageLimits.unlimited)
        #expect(back[1].bitmap == frames[1].converted(to: .rgba8))
        #expect(back[1].duration == 0.25)
    }
}
