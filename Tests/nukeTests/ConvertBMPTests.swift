import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import Testing

/// `nuke` links NukeBMP, NukeICO and NukeXBM: it reads every valid fixture of theirs to its
/// reference and writes the three formats.
@Suite struct ConvertBMPTests {
    static let references: [Fixture] = {
        let formats: [String] = ["bmp", "ico", "cur", "xbm"]
        let all: [Fixture] = formats.flatMap { (format: String) -> [Fixture] in NukeBinary.fixtures(format) }
        return all.filter { (fixture: Fixture) -> Bool in fixture.reference != nil && fixture.iccSHA256 == nil }
    }()

    @Test func fixturesAreThere() {
        #expect(Self.references.count >= 40)
    }

    @Test(arguments: references)
    func pamEqualsTheReference(_ fixture: Fixture) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.pam")
        let output = try NukeBinary.run("convert", fixture.url.path, out.path)
        #expect(output.status == 0, "\(output.stderr)")
        let written = try Netpbm.decode(try Data(contentsOf: out))
        let reference = try Netpbm.decode(try Data(contentsOf: try #require(fixture.referenceURL)))
        let comparison = ImageComparison(written, reference: reference, tolerance: .maxDifference(fixture.tolerance ?? 0))
        #expect(comparison.isMatch, "\(fixture.file): \(comparison)")
    }

    @Test(arguments: ["bmp", "ico", "cur", "xbm"])
    func writes(_ ext: String) throws {
        let directory = try NukeBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.\(ext)")
        let input = NukeBinary.root.appendingPathComponent("Fixtures/bmp/rgba32-v5.bmp")
        let output = try NukeBinary.run("convert", input.path, out.path)
        #expect(output.status == 0, "\(output.stderr)")
        let type = ImageType(try Data(contentsOf: out))
        #expect(type?.filenameExtensions.contains(ext) == true, "\(String(describing: type))")
    }
}
