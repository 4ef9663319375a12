import Foundation
import NukeCore
import NukeNetpbm
import NukeConformance
import Testing

@Suite struct ProgressiveCommandTests {
    /// Runs `nuke progressive` and returns its output and the files it wrote.
    static func replay(_ path: String, _ arguments: String...) throws -> (NukeBinary.Output, [String], URL) {
        let directory = try NukeBinary.temporaryDirectory()
        let output = try NukeBinary.run(["progressive", path, "--output-dir", directory.path] + arguments)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return (output, files, directory)
    }

    /// A 10-scan progressive JPEG gives one preview per scan (in chunks smaller than any scan, so no
    /// chunk completes two scans), then the final image, which equals a one-shot decode.
    @Test(arguments: ["Fixtures/jpeg/progressive.jpg", "Examples/progressive.jpg"])
    func tenScans(_ path: String) throws {
        let (output, files, directory) = try Self.replay(path, "--chunk-size", "32")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(output.status == 0, "\(output.stderr)")
        let previews = output.lines.filter { $0.hasPrefix("preview") }
        #expect(previews.count == 10, "\(output.stdout)")
        #expect(output.lines.last?.hasPrefix("final") == true)
        #expect(output.lines.first { $0.hasPrefix("format") }?.contains("JPEG") == true)
        #expect(output.lines.first { $0.hasPrefix("size") } != nil)
        let expected = (1...10).map { String(format: "preview-%02d-scan-%02d.png", $0, $0) } + ["final.png"]
        #expect(files == expected.sorted())
        let final = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: directory.appendingPathComponent("final.png")))
        let oneShot = try ImageDecoderRegistry.shared.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent(path)))
        #expect(final.image.bitmap == oneShot.image.bitmap)
    }

    @Test(.enabled(if: NukeBinary.corporaExist))
    func nukeProgressiveJPEG() throws {
        let path = NukeBinary.corpora.appendingPathComponent("jpeg/kean_Nuke/Tests/Resources/progressive.jpeg").path
        let (output, _, directory) = try Self.replay(path, "--chunk-size", "128")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(output.status == 0)
        #expect(output.lines.filter { $0.hasPrefix("preview") }.count == 10)
    }

    @Test func interlacedPNGPasses() throws {
        let (output, files, directory) = try Self.replay("Fixtures/png/adam7-rgb-8-160x120.png", "--chunks", "64", "--format", "pam")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(output.status == 0)
        #expect(output.lines.filter { $0.hasPrefix("preview") }.count >= 2)
        #expect(files.contains("final.pam"))
        let final = try Netpbm.decode(try Data(contentsOf: directory.appendingPathComponent("final.pam")))
        let reference = try Netpbm.decode(try Data(contentsOf: NukeBinary.root.appendingPathComponent("Fixtures/png/adam7-rgb-8-160x120.pam")))
        #expect(final == reference)
    }

    @Test func truncatedFileFails() throws {
        let (output, _, directory) = try Self.replay("Fixtures/jpeg/truncated-progressive.jpg", "--chunks", "4")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(output.status == 1)
        #expect(output.stderr.contains("incomplete"))
    }

    @Test func usage() throws {
        #expect(try NukeBinary.run("progressive", "Examples/progressive.jpg", "--output-dir", "/tmp/x", "--chunks", "2", "--chunk-size", "9").status == 64)
        #expect(try NukeBinary.run("progressive", "Examples/progressive.jpg").status == 64, "--output-dir is required")
    }
}
