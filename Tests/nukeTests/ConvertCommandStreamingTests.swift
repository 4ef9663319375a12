import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

/// `nuke convert` writes its output as a stream into a temporary file renamed at the end.
@Suite struct ConvertCommandStreamingTests {
    static let inputs = ["Fixtures/png/rgb-8.png", "Fixtures/jpeg/baseline-420.jpg", "Fixtures/jpeg/grayscale.jpg"]
        + ["rgba-8.png", "rgba-16.png", "gray-alpha-8.png", "gray-alpha-16.png", "gray-16.png", "rgb-16.png"].map { "Fixtures/png/" + $0 }
            .filter { FileManager.default.fileExists(atPath: NukeBinary.root.appendingPathComponent($0).path) }

    /// The streamed PAM and PPM hold exactly the bytes of the kit's in-memory writers.
    @Test(arguments: inputs)
    func netpbmOutputIsTheKitsByteForByte(_ input: String) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pam = directory.appendingPathComponent("out.pam")
        let ppm = directory.appendingPathComponent("out.ppm")
        for out in [pam, ppm] {
            let result = try NukeBinary.run("convert", input, out.path)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let pamData = try Data(contentsOf: pam)
        let bitmap = try Netpbm.decode(pamData)
        #expect(pamData == Netpbm.pam(bitmap))
        #expect(try Data(contentsOf: ppm) == Netpbm.pnm(bitmap))
        // Nothing but the two outputs is left in the directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["out.pam", "out.ppm"])
    }

    /// JPEG to PAM goes from the decoder to the file row by row: the pixels are djpeg's
    /// reference exactly (tolerance 0 in the fixtures' manifest), for baseline, progressive,
    /// grayscale and CMYK files.
    @Test(arguments: ["baseline-420", "progressive", "grayscale", "cmyk-adobe", "restart-rows"])
    func jpegToPAMIsDjpegsPixels(_ name: String) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.pam")
        let result = try NukeBinary.run("convert", "Fixtures/jpeg/\(name).jpg", out.path)
        #expect(result.status == 0, "\(result.stderr)")
        let reference = try Netpbm.decode(Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/jpeg/\(name).pam")))
        let written = try Netpbm.decode(Data(contentsOf: out))
        #expect(written == reference)
        #expect(result.stdout.contains("\(reference.width)×\(reference.height)"))
    }

    /// A JPEG that fails halfway through its rows leaves no PAM behind, only the error.
    /// A TIFF larger than the head `nuke convert` reads first is read by libtiff from the file
    /// in process, and sent whole to a helper with `--isolate` (which cannot open the file): the
    /// same thumbnail either way.
    @Test func aTIFFIsReadFromItsFileInProcessAndWholeWhenIsolated() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tiff = directory.appendingPathComponent("big.tif").path
        #expect(try NukeBinary.run("convert", "Fixtures/processing/source.jpg", tiff).status == 0)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: tiff)[.size] as? Int)
        try #require(size > 128 * 1024, "the TIFF (\(size) bytes) fits in the head")
        var outputs: [Bitmap] = []
        for (name, extra) in [("file.pam", [String]()), ("isolated.pam", ["--isolate"])] {
            let out = directory.appendingPathComponent(name).path
            let arguments = ["convert"] + extra + [tiff, out, "--max-size", "64"]
            let result = try NukeBinary.run(arguments)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            outputs.append(try Netpbm.decode(try Data(contentsOf: URL(fileURLWithPath: out))))
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0].width == 64 && outputs[0].height == 48)
    }

    @Test func aFailedStreamedPAMLeavesNoFile() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try NukeBinary.run("convert", "Fixtures/jpeg/truncated-half.jpg", directory.appendingPathComponent("out.pam").path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("JPEG"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// A conversion that fails leaves no temporary file and no half-written output.
    @Test func aFailedConversionLeavesNoFile() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The output path is a directory: everything is written, then the rename fails.
        let blocked = directory.appendingPathComponent("blocked.png")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: true)
        let result = try NukeBinary.run("convert", "Fixtures/png/rgb-8.png", blocked.path)
        #expect(result.status != 0)
        #expect(result.stderr.contains("blocked.png"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["blocked.png"])

        // A decode failure leaves an existing output as it was.
        let existing = directory.appendingPathComponent("kept.png")
        try Data("previous".utf8).write(to: existing)
        let corrupt = try NukeBinary.run("convert", "Fixtures/jpeg/truncated-half.jpg", existing.path)
        #expect(corrupt.status == 1)
        #expect(try Data(contentsOf: existing) == Data("previous".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["blocked.png", "kept.png"])
    }
}
