import Foundation
import NukeCore
import NukeGIF
import NukeNetpbm
import NukePixels
import NukePNG
import NukeProcessing
import NukeWebP
import Testing

/// Animated in, animated out: every frame processed lazily, timing and loop count kept, checked
/// frame by frame against the same processors run on ImageMagick's composited reference frames
/// (Fixtures/gif, `NAME.N.pam`).
@Suite struct AnimationProcessingTests {
    static let gifs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/gif")
    static let processors: [any ImageProcessing] = [
        ImageProcessors.Resize(size: ImageSize(width: 12, height: 12), crop: true),
        ImageProcessors.Flip(.horizontal),
        ImageProcessors.RoundedCorners(radius: 3),
    ]

    static func animation(_ name: String) throws -> (ImageContainer, [Bitmap]) {
        let container = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: gifs.appendingPathComponent(name + ".gif")))
        let count = container.animation?.frameCount ?? 1
        let references = try (0..<count).map { try Netpbm.decode(try Data(contentsOf: gifs.appendingPathComponent("\(name).\($0).pam"))) }
        return (container, references)
    }

    /// The processed reference frame: straight RGBA, transparent pixels as transparent black
    /// (the references write them so; encoders may keep any colour under alpha 0).
    static func normalized(_ bitmap: Bitmap) -> Bitmap {
        var copy = bitmap.unpremultiplied().converted(to: .rgba8)
        copy.withUnsafeMutableBytes { bytes in
            for p in stride(from: 0, to: bytes.count, by: 4) where bytes[p + 3] == 0 { bytes[p] = 0; bytes[p + 1] = 0; bytes[p + 2] = 0 }
        }
        return copy
    }

    @Test(arguments: ["positions-loop3", "dispose-previous", "mixed-disposal"])
    func losslessRoundTripsEqualTheProcessedReferenceFrames(name: String) throws {
        let (container, references) = try Self.animation(name)
        let source = try #require(container.animation)
        let processed = try source.processed(by: Self.processors)
        #expect(processed.canvasSize == ImageSize(width: 12, height: 12))
        #expect(processed.loopCount == source.loopCount)
        #expect(processed.frameInfos.map(\.duration) == source.frameInfos.map(\.duration))
        let expected = try references.map { Self.normalized(try ImageProcessors.Composition(Self.processors).process($0)) }
        for encoder in [ImageEncoders.PNG(options: ImageEncodingOptions(isLossless: true)) as any AnimatedImageEncoding,
                        ImageEncoders.WebP(options: ImageEncodingOptions(isLossless: true))] {
            let data = try encoder.encode(processed)
            let decoded = try ImageDecoderRegistry.shared.decode(data)
            let animation = try #require(decoded.animation, "\(type(of: encoder)) wrote a still image")
            #expect(animation.loopCount == source.loopCount)
            let frames = try animation.allFrames()
            #expect(frames.count == references.count)
            for (index, frame) in frames.enumerated() {
                #expect(abs((frame.duration ?? 0) - source.frameInfos[index].duration) < 0.001)
                #expect(Self.normalized(frame.bitmap) == expected[index], "\(type(of: encoder)) frame \(index)")
            }
        }
    }

    /// GIF quantises each frame to 256 colours and alpha to on or off, so the frames are
    /// flattened (opaque): same frame count, timing and loop count; the pixels within GIF's
    /// palette error (PSNR over 30 dB on these few-colour frames).
    @Test func gifRoundTripKeepsTimingAndLoopCount() throws {
        let (container, references) = try Self.animation("positions-loop3")
        let processors = Self.processors + [ImageProcessors.Flatten(color: .white)]
        let processed = try #require(container.animation).processed(by: processors)
        let decoded = try ImageDecoderRegistry.shared.decode(try ImageEncoders.GIF().encode(processed))
        let animation = try #require(decoded.animation)
        #expect(animation.loopCount == 3)
        let frames = try animation.allFrames()
        #expect(frames.count == 3)
        for (index, frame) in frames.enumerated() {
            #expect(abs((frame.duration ?? 0) - 0.07) < 0.001)
            let expected = Self.normalized(try ImageProcessors.Composition(processors).process(references[index]))
            let psnr = try #require(ProcessingFixtures.psnr(Self.normalized(frame.bitmap), expected))
            #expect(psnr >= 30, "frame \(index): \(psnr) dB")
        }
    }

    /// The registry's processing decode: the still image is frame 0 processed, the container's
    /// animation every frame processed.
    @Test func registryDecodeProcessesTheStillAndTheAnimation() throws {
        let data = try Data(contentsOf: Self.gifs.appendingPathComponent("positions-loop3.gif"))
        let registry = ImageDecoderRegistry.shared
        let container = try registry.decode(registry.makeContext(for: data), processors: Self.processors)
        let (_, references) = try Self.animation("positions-loop3")
        let first = try ImageProcessors.Composition(Self.processors).process(references[0])
        #expect(Self.normalized(container.image.bitmap) == Self.normalized(first))
        let animation = try #require(container.animation)
        #expect(animation.frameCount == 3)
        #expect(Self.normalized(try animation.frame(at: 2).canvas) == Self.normalized(try ImageProcessors.Composition(Self.processors).process(references[2])))
    }

    /// Frames are processed one at a time as the encoder asks: a processor that sees the frames
    /// in order and never more than one at once.
    @Test func framesAreProcessedOneAtATimeInOrder() throws {
        let (container, _) = try Self.animation("mixed-disposal")
        let log = FrameLog()
        let counting = ImageProcessors.Anonymous(id: "count") { bitmap in
            log.record()
            return bitmap
        }
        let processed = try #require(container.animation).processed(by: [counting])
        #expect(log.count == 1)  // the first frame, for the canvas size
        let iterator = try processed.makeIterator()
        var seen = 0
        while try iterator.next() != nil {
            seen += 1
            #expect(log.count == 1 + seen)
        }
        #expect(seen == 4)
    }

    @Test func aFrameThatChangesSizeThrows() throws {
        let (container, _) = try Self.animation("positions-loop3")
        let log = FrameLog()
        let growing = ImageProcessors.Anonymous(id: "grow") { bitmap in
            log.record()
            return log.count > 2 ? bitmap.cropped(to: ImageRect(x: 0, y: 0, width: 5, height: 5)) : bitmap
        }
        let processed = try #require(container.animation).processed(by: [growing])
        #expect(throws: ImageCodecError.self) { try ImageEncoders.PNG().encode(processed) }
    }
}
