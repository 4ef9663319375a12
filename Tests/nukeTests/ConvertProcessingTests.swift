import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import NukeProcessing
import Testing

/// `nuke convert` with processors: the built binary against the same processors run here, and
/// animations kept through GIF → WebP/APNG.
@Suite struct ConvertProcessingTests {
    static func run(_ input: String, _ ext: String, _ arguments: [String]) throws -> (NukeBinary.Output, Data?) {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.\(ext)")
        let output = try NukeBinary.run(["convert", input, out.path] + arguments)
        return (output, try? Data(contentsOf: out))
    }

    /// PAM keeps the pixels exactly: the binary's fill, rotation, flip, blur and rounded corners
    /// equal the library's on the same decode (orientation kept for PAM, as the tool does).
    @Test func processorsMatchTheLibrary() throws {
        let arguments = ["--resize", "fill:48x48", "--crop", "center", "--rotate", "90", "--flip", "h", "--blur", "1.5", "--round", "8"]
        let (output, data) = try Self.run("Fixtures/processing/source.jpg", "pam", arguments)
        #expect(output.status == 0, "\(output.stderr)")
        let written = try Netpbm.decode(try #require(data))
        let source = try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/processing/source.jpg"))
        let processors: [any ImageProcessing] = [
            ImageProcessors.Resize(size: ImageSize(width: 48, height: 48), crop: true), ImageProcessors.Rotate(degrees: 90),
            ImageProcessors.Flip(.horizontal), ImageProcessors.GaussianBlur(radius: 1.5), ImageProcessors.RoundedCorners(radius: 8),
        ]
        var context = ImageDecoderRegistry.shared.makeContext(for: source)
        context.colorConversion = .sRGB
        let expected = try ImageDecoderRegistry.shared.decode(context, processors: processors).image.bitmap
        #expect(written == expected)
        #expect(written.pixelFormat == .rgba8 && written.width == 48 && written.height == 48)
    }

    /// The output stage in the processors' plan (the fill's crop, the turn and the flip with the
    /// EXIF orientation as one copy, the colour converted after them) writes the pixels of each
    /// step run in order: the output stage on the decode, then every processor.
    @Test(arguments: ["Fixtures/jpeg/exif-orientation-6-be.jpg", "Fixtures/jpeg/exif-orientation-5-le.jpg", "Fixtures/jpeg/icc.jpg"])
    func theOutputStageInThePlanWritesTheStepsInOrder(_ input: String) throws {
        let (output, data) = try Self.run(input, "png", ["--resize", "fill:16x12", "--crop", "center", "--rotate", "90", "--flip", "v"])
        #expect(output.status == 0, "\(output.stderr)")
        let written = try ImageDecoderRegistry.shared.decode(try #require(data)).image.bitmap
        let source = try Data(contentsOf: NukeBinary.root.appendingPathComponent(input))
        let processors: [any ImageProcessing] = [
            ImageProcessors.Resize(size: ImageSize(width: 16, height: 12), crop: true), ImageProcessors.Rotate(degrees: 90), ImageProcessors.Flip(.vertical),
        ]
        var context = ImageDecoderRegistry.shared.makeContext(for: source)
        context.colorConversion = .sRGB
        let decoded = try ImageDecoderRegistry.shared.decode(context.planned(for: processors))
        let expected = try ImageProcessors.Composition(processors).process(decoded.image.bitmap)
        #expect(written == expected, "\(input)")
        #expect(written.width == 12 && written.height == 16)
    }

    @Test func circleAndFlattenMakeAnOpaqueDisc() throws {
        let (output, data) = try Self.run("Fixtures/processing/source.jpg", "pam", ["--circle", "--flatten", "#ff0000"])
        #expect(output.status == 0, "\(output.stderr)")
        let written = try Netpbm.decode(try #require(data))
        #expect(written.pixelFormat == .rgb8 && written.width == 300 && written.height == 300)
        #expect([0, 1, 2].map { written.sample(x: 0, y: 0, channel: $0) } == [255, 0, 0])
    }

    @Test(arguments: ["webp", "png", "gif"])
    func animationsStayAnimated(ext: String) throws {
        let (output, data) = try Self.run("Fixtures/gif/positions-loop3.gif", ext, ["--resize", "fill:10x10", "--crop", "center"])
        #expect(output.status == 0, "\(output.stderr)")
        let container = try ImageDecoderRegistry.shared.decode(try #require(data))
        let animation = try #require(container.animation, "\(ext) written as a still image")
        #expect(animation.canvasSize == ImageSize(width: 10, height: 10))
        #expect(animation.frameCount == 3)
        #expect(animation.loopCount == 3)
        #expect(animation.frameInfos.allSatisfy { abs($0.duration - 0.07) < 0.001 })
    }

    /// A still output of an animation: frame 0, or `--frame N`.
    @Test func aStillOutputTakesTheChosenFrame() throws {
        for (arguments, index) in [([String](), 0), (["--frame", "2"], 2)] {
            let (output, data) = try Self.run("Fixtures/gif/positions-loop3.gif", "pam", ["--flip", "v"] + arguments)
            #expect(output.status == 0, "\(output.stderr)")
            let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/gif/positions-loop3.\(index).pam")))
            let written = try Netpbm.decode(try #require(data))
            #expect(written.unpremultiplied() == (try ImageProcessors.Flip(.vertical).process(reference)), "frame \(index)")
        }
    }

    @Test(arguments: [
        ["--crop", "top"],                          // a gravity needs --resize fill
        ["--resize", "cover:10x10"],
        ["--crop", "sideways"],
        ["--rotate", "45"],
        ["--flip", "d"],
        ["--flatten", "mauve"],
        ["--upscale"],
        ["--frame", "-1"],
    ])
    func invalidArgumentsAreRefused(arguments: [String]) throws {
        let (output, _) = try Self.run("Fixtures/processing/source.jpg", "png", arguments)
        #expect(output.status == 64, "\(arguments): \(output.stderr)")
    }

    @Test func errorsOnTheImageFail() throws {
        let (outside, _) = try Self.run("Fixtures/processing/source.jpg", "png", ["--crop", "50x50+380+0"])
        #expect(outside.status != 0 && outside.stderr.contains("not inside"), "\(outside.stderr)")
        let (frame, _) = try Self.run("Fixtures/gif/still.gif", "png", ["--frame", "1"])
        #expect(frame.status != 0 && frame.stderr.contains("not animated"), "\(frame.stderr)")
    }
}
