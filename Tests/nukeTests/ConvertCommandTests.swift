import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import Testing

@Suite struct ConvertCommandTests {
    /// Maximum absolute difference between two bitmaps' samples; `nil` when their shapes differ.
    static func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int? {
        guard a.width == b.width, a.height == b.height, a.pixelFormat == b.pixelFormat else { return nil }
        var worst = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<a.pixelFormat.channelCount {
                    worst = max(worst, abs(a.sample(x: x, y: y, channel: c) - b.sample(x: x, y: y, channel: c)))
                }
            }
        }
        return worst
    }

    static let references = (NukeBinary.fixtures("jpeg") + NukeBinary.fixtures("png")).filter { $0.reference != nil && $0.expectedError == nil }

    @Test(arguments: references)
    func pamEqualsTheReference(_ fixture: Fixture) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.pam")
        let output = try NukeBinary.run("convert", fixture.url.path, out.path)
        #expect(output.status == 0, "\(output.stderr)")
        let written = try Netpbm.decode(try Data(contentsOf: out))
        // 16-bit files keep their samples in PAM; the others are 8-bit.
        let reference = try Netpbm.decode(try Data(contentsOf: try #require(fixture.reference16URL ?? fixture.referenceURL)))
        let difference = Self.maxDifference(written, reference)
        #expect(difference != nil, "\(written) vs \(reference)")
        #expect((difference ?? .max) <= fixture.tolerance ?? 0)
    }

    @Test func eightBitFlagScalesSixteenBitSamples() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.pam")
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-16.png", out.path, "--8-bit").status == 0)
        let written = try Netpbm.decode(try Data(contentsOf: out))
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/png/rgb-16.pam")))
        #expect(written.pixelFormat == .rgb8)
        #expect(Self.maxDifference(written, reference) == 0)
    }

    @Test func pngAndJPEGOutputsDecodeBack() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("a.png").path
        let jpeg = directory.appendingPathComponent("b.jpeg").path
        let ppm = directory.appendingPathComponent("c.ppm").path
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgba-8.png", png).status == 0)
        #expect(try NukeBinary.run("convert", png, jpeg, "--quality", "90").status == 0)
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgba-8.png", ppm).status == 0)
        // PNG round trip is lossless.
        let original = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/png/rgba-8.png")))
        let roundTrip = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(roundTrip.image.bitmap == original.image.bitmap)
        let decodedJPEG = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: URL(fileURLWithPath: jpeg)))
        #expect(decodedJPEG.type == .jpeg)
        #expect(decodedJPEG.image.width == 61)
        let pnm = try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: ppm)))
        #expect(pnm.pixelFormat == .rgb8)
        #expect(pnm == original.image.bitmap.converted(to: .rgb8))
    }

    @Test func toOverridesTheExtension() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("image.bin").path
        let output = try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", out, "--to", "pam")
        #expect(output.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).starts(with: Array("P7\n".utf8)))
    }

    @Test func maxSizeFitsExactly() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // PNG has no scaled decode: the resampler does it all (61×45 → 30×22).
        let png = directory.appendingPathComponent("small.pam").path
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", png, "--max-size", "30x30").status == 0)
        let small = try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: png)))
        #expect((small.width, small.height) == (30, 22))
        // JPEG: a DCT-scaled decode to at least 100×67, then the resampler (640×427 → 100×67).
        let jpeg = directory.appendingPathComponent("thumb.pam").path
        let output = try NukeBinary.run("convert", "Examples/progressive.jpg", jpeg, "--max-size", "100x100")
        #expect(output.status == 0)
        let thumb = try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: jpeg)))
        #expect((thumb.width, thumb.height) == (100, 67))
        // Never enlarged.
        let same = directory.appendingPathComponent("same.pam").path
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", same, "--max-size", "1000x1000").status == 0)
        #expect(try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: same))).width == 61)
    }

    /// `--fast-scaling` hands the whole reduction to libwebp's scaler: `dwebp -scale`'s pixels.
    @Test func fastScalingGivesLibwebpsScaledPixels() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fast = directory.appendingPathComponent("fast.pam"), quality = directory.appendingPathComponent("quality.pam")
        let output = try NukeBinary.run("convert", "Fixtures/webp/lossy.webp", fast.path, "--max-size", "16x16", "--fast-scaling")
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try NukeBinary.run("convert", "Fixtures/webp/lossy.webp", quality.path, "--max-size", "16x16").status == 0)
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/webp/lossy.fit-16x16.ppm")))
        let written = try Netpbm.decode(try Data(contentsOf: fast))
        #expect(Self.maxDifference(written, reference) == 0)
        let resampled = try Netpbm.decode(try Data(contentsOf: quality))
        #expect(Self.maxDifference(resampled, reference).map { $0 > 0 } == true, "the default path resamples in the core")
    }

    @Test func maxSizeFitsTheImageAsDisplayed() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Stored 37×23 with EXIF orientation 6 displays as 23×37: fitting 20×10 gives 6×10 on
        // screen, so 10×6 stored pixels. Orientation 1 fits as stored: 16×10.
        let rotated = directory.appendingPathComponent("rotated.pam").path
        #expect(try NukeBinary.run("convert", "Fixtures/jpeg/exif-orientation-6-le.jpg", rotated, "--max-size", "20x10").status == 0)
        let upright = directory.appendingPathComponent("upright.pam").path
        #expect(try NukeBinary.run("convert", "Fixtures/jpeg/exif-orientation-1-le.jpg", upright, "--max-size", "20x10").status == 0)
        let r = try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: rotated)))
        let u = try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: upright)))
        #expect((r.width, r.height) == (10, 6))
        #expect((u.width, u.height) == (16, 10))
    }

    @Test func usageErrors() throws {
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-8.png").status == 64)
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", "/tmp/out.xyz").status == 64)
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", "/tmp/out.png", "--quality", "101").status == 64)
        #expect(try NukeBinary.run("convert", "Fixtures/png", "--output", "/tmp/x").status == 64, "batch needs --to")
    }

    @Test func errorsNameTheFormatAndTheReason() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let corrupt = try NukeBinary.run("convert", "Fixtures/jpeg/truncated-half.jpg", directory.appendingPathComponent("x.png").path)
        #expect(corrupt.status == 1)
        #expect(corrupt.stderr.contains("truncated-half.jpg"))
        #expect(corrupt.stderr.contains("JPEG"))
        #expect(corrupt.stderr.contains("incomplete"))

        let svg = try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", directory.appendingPathComponent("x.svg").path)
        #expect(svg.status == 3)
        #expect(svg.stderr.contains("no encoder is registered for SVG"))

        let missing = try NukeBinary.run("convert", "/nonexistent.png", directory.appendingPathComponent("x.png").path)
        #expect(missing.status == 4)
    }

    @Test func batchWithACorruptFile() throws {
        let input = try NukeBinary.temporaryDirectory()
        let output = try NukeBinary.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: input)
            try? FileManager.default.removeItem(at: output)
        }
        try FileManager.default.createDirectory(at: input.appendingPathComponent("sub"), withIntermediateDirectories: true)
        for (source, name) in [("Fixtures/png/rgb-8.png", "a.png"), ("Fixtures/jpeg/baseline-420.jpg", "sub/b.jpg"),
                               ("Fixtures/jpeg/truncated-half.jpg", "c.jpg")] {
            try FileManager.default.copyItem(at: NukeBinary.root.appendingPathComponent(source), to: input.appendingPathComponent(name))
        }
        try Data("not an image".utf8).write(to: input.appendingPathComponent("notes.txt"))
        let result = try NukeBinary.run("convert", input.path, "--to", "png", "--output", output.path, "--jobs", "2")
        #expect(result.status == 1)
        #expect(result.stdout.contains("Converted 2 of 3 files to PNG, 1 failed"))
        #expect(result.stderr.contains("c.jpg"))
        #expect(result.stderr.contains("incomplete"))
        #expect(FileManager.default.fileExists(atPath: output.appendingPathComponent("a.png").path))
        #expect(FileManager.default.fileExists(atPath: output.appendingPathComponent("sub/b.png").path))
        #expect(!FileManager.default.fileExists(atPath: output.appendingPathComponent("c.png").path))
        // Not a terminal: one plain line per converted file.
        #expect(result.lines.filter { $0.hasPrefix("ok ") }.count == 2)
        #expect(!result.stderr.contains("\u{1B}["))
    }

    @Test func batchToAFormatWithoutEncoderFailsEachFileClearly() throws {
        let output = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", "Fixtures/jpeg/baseline-420.jpg",
                                        "--to", "svg", "--output", output.path)
        #expect(result.status == 3)
        #expect(result.stderr.components(separatedBy: "no encoder is registered for SVG").count - 1 == 2)
        #expect(result.stdout.contains("Converted 0 of 2 files to SVG, 2 failed"))
    }

    /// `--to webp` writes lossy WebP at `--quality`, or lossless with `--lossless`.
    @Test func toWebP() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let low = directory.appendingPathComponent("low.webp"), high = directory.appendingPathComponent("high.webp")
        let exact = directory.appendingPathComponent("exact.webp")
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgba-8.png", low.path, "--quality", "10").status == 0)
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgba-8.png", high.path, "--quality", "95").status == 0)
        #expect(try NukeBinary.run("convert", "Fixtures/png/rgba-8.png", exact.path, "--lossless").status == 0)
        let lowData = try Data(contentsOf: low), highData = try Data(contentsOf: high)
        #expect(ImageType(lowData) == .webp && ImageType(highData) == .webp)
        #expect(lowData.count < highData.count)
        let original = try ImageDecoderRegistry.shared.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/png/rgba-8.png")))
        let decoded = try ImageDecoderRegistry.shared.decode(Data(contentsOf: exact))
        #expect(decoded.image.bitmap == original.image.bitmap)
    }

    /// An animated GIF becomes an animated WebP with the same frames and timing.
    @Test func animatedGIFToAnimatedWebP() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("anim.webp")
        let result = try NukeBinary.run("convert", "Fixtures/gif/dispose-none.gif", output.path, "--lossless")
        #expect(result.status == 0, "\(result.stderr)")
        let source = try ImageDecoderRegistry.shared.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/gif/dispose-none.gif")))
        let converted = try ImageDecoderRegistry.shared.decode(Data(contentsOf: output))
        let a = try #require(source.animation), b = try #require(converted.animation)
        #expect(b.frameCount == a.frameCount)
        #expect(b.frameInfos.map(\.duration) == a.frameInfos.map(\.duration))
        #expect(try b.allFrames(limits: .unlimited).map(\.bitmap) == a.allFrames(limits: .unlimited).map(\.bitmap))
    }
}
