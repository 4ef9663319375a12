import Foundation
import NukeConformance
import NukeCore
import Testing

/// `nuke convert --untrusted`: the untrusted limits and strict decoding.
@Suite struct ConvertUntrustedTests {
    @Test func bombFailsOnlyWhenUntrusted() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A 1×1 JPEG whose frame header is patched to declare 4,000 × 3,000: libjpeg "decodes"
        // it to grey with a warning; 36 MB from a few hundred bytes is a decompression bomb.
        var data = try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/jpeg/baseline-1x1.jpg"))
        let sof = try #require(data.range(of: Data([0xFF, 0xC0])))
        let at = sof.upperBound + 3
        data.replaceSubrange(at..<(at + 4), with: [0x0B, 0xB8, 0x0F, 0xA0])   // height 3000, width 4000
        let input = directory.appendingPathComponent("bomb.jpg")
        try data.write(to: input)
        let trusted = try NukeBinary.run("convert", input.path, directory.appendingPathComponent("a.png").path, "--max-size", "64x64")
        #expect(trusted.status == 0, "\(trusted.stderr)")
        let untrusted = try NukeBinary.run("convert", input.path, directory.appendingPathComponent("b.png").path, "--max-size", "64x64", "--untrusted")
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("limit exceeded"), "\(untrusted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("b.png").path))
    }

    @Test func ordinaryFileConvertsWhenUntrusted() throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = NukeBinary.root.appendingPathComponent("Fixtures/jpeg/baseline-420.jpg")
        let output = try NukeBinary.run("convert", fixture.path, directory.appendingPathComponent("out.png").path, "--untrusted")
        #expect(output.status == 0, "\(output.stderr)")
    }
}
