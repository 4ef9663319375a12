import Foundation
import NukeConformance
import NukeCore
import NukePNG
import Testing

/// The conformance kit run against NukePNG over Fixtures/png, one test per check and
/// fixture, plus the public corpora in ../shared/corpora/png when present.
enum PNGConformance {
    /// The repository root: three levels up from Tests/NukePNGTests/PNGConformanceTests.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Fixtures/png")
    static let corpora = root.deletingLastPathComponent().appendingPathComponent("shared/corpora/png")
    static let corporaExist = FileManager.default.fileExists(atPath: corpora.path)

    /// The manifest; empty when it cannot be read (``manifestLoads`` then fails).
    static let manifest = (try? FixtureManifest.load(from: fixtures)) ?? FixtureManifest(format: "png", directory: fixtures, fixtures: [])

    /// Every prefix of a PNG costs a decode of the prefix, so the 46 KiB Adam7 fixture alone
    /// would take 46,000 decodes (13 s in a debug build): files over 16 KiB are cut at a
    /// stride instead (about 900 prefixes).
    static let suite: ConformanceSuite = {
        var options = ConformanceSuite.Options()
        options.exhaustiveTruncationLimit = 16 * 1024
        options.roundTripPreservesOrientation = true   // NukePNG writes the eXIf chunk back
        return ConformanceSuite(codec: .png, manifest: manifest, options: options)
    }()

    /// Every PNG in the corpora, with what is known about it.
    static let corpusFiles: [Fixture] = {
        guard let enumerator = FileManager.default.enumerator(at: corpora, includingPropertiesForKeys: nil) else { return [] }
        return enumerator.compactMap { $0 as? URL }
            .filter { $0.pathExtension.lowercased() == "png" }
            .sorted { $0.path < $1.path }
            .map(expectation)
    }()

    /// What a corpus file must do.
    ///
    /// - PngSuite: `x*` files are corrupt and must fail; every other one (basn, basi, ft...)
    ///   is a valid 32×32 image.
    /// - libpng's crashers, per `tests/pngtest-all`: the huge-chunk files, huge_IDAT and
    ///   badadler must fail; badcrc (passes only with CRC checks relaxed), bad_iCCP and
    ///   empty_ancillary_chunks (benign errors) may go either way.
    /// - libpng's testpngs (every colour type and depth, gamma and sRGB variants) decode;
    ///   `badpal/` (palette index out of range, a warning in libpng) may go either way.
    /// - Pillow: the truncated files must be `.incomplete`, the broken ones must fail, the
    ///   zTXt bomb and the IDAT-after-IEND file may go either way, the rest decode.
    static func expectation(for url: URL) -> Fixture {
        let name = url.lastPathComponent
        let path = url.path
        if path.contains("/contrib/pngsuite/") {
            if name.hasPrefix("x") { return Fixture(url: url, kind: .invalid) }
            return Fixture(url: url, kind: .valid, width: 32, height: 32)
        }
        if path.contains("/crashers/") {
            if name.hasPrefix("huge_") || name == "badadler.png" { return Fixture(url: url, kind: .invalid) }
            return Fixture(url: url, kind: .unknown)
        }
        if path.contains("/badpal/") { return Fixture(url: url, kind: .unknown) }
        if path.contains("/contrib/testpngs/") { return Fixture(url: url, kind: .valid) }
        switch name {
        case "truncated_image.png", "truncated_end_chunk.png": return Fixture(url: url, kind: .invalid, expectedError: .incomplete)
        case "broken.png", "broken_data_stream.png": return Fixture(url: url, kind: .invalid)
        case "png_decompression_dos.png", "hopper_idat_after_image_end.png": return Fixture(url: url, kind: .unknown)
        case "hopper.png": return Fixture(url: url, kind: .valid, width: 128, height: 128)
        default: return Fixture(url: url, kind: .valid)
        }
    }
}

@Suite struct PNGConformanceTests {
    typealias C = PNGConformance

    /// Records every failure of a check and, when `minimumCases` is above 0, fails if the
    /// check ran fewer cases (one that ran nothing could not have failed).
    private func expectPasses(
        _ result: ConformanceResult, minimumCases: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if minimumCases > 0 {
            #expect(result.caseCount >= minimumCases, "\(result)", sourceLocation: sourceLocation)
        }
        #expect(result.failures.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    @Test func manifestLoads() throws {
        let manifest = try FixtureManifest.load(from: C.fixtures)
        #expect(manifest.format == "png")
        #expect(manifest.valid.count >= 30)
        #expect(manifest.invalid.count >= 5)
        #expect(manifest.fixtures.count == C.manifest.fixtures.count)
    }

    @Test(arguments: C.manifest.fixtures)
    func sniffing(_ fixture: Fixture) {
        expectPasses(C.suite.checkSniffing(fixture))
    }

    @Test(arguments: C.manifest.valid)
    func referenceDecode(_ fixture: Fixture) {
        expectPasses(C.suite.checkReferenceDecode(fixture), minimumCases: 2)
    }

    @Test(arguments: C.manifest.invalid)
    func invalidInput(_ fixture: Fixture) {
        expectPasses(C.suite.checkInvalidInput(fixture))
    }

    @Test(arguments: C.manifest.valid)
    func truncation(_ fixture: Fixture) throws {
        let result = C.suite.checkTruncation(fixture)
        let count = try fixture.data().count
        #expect(result.caseCount == C.suite.truncationLengths(count: count).count)
        #expect(result.caseCount == count || count > C.suite.options.exhaustiveTruncationLimit)
        expectPasses(result)
    }

    @Test(arguments: C.manifest.valid)
    func corruption(_ fixture: Fixture) {
        expectPasses(C.suite.checkCorruption(fixture), minimumCases: 1)
    }

    @Test(arguments: C.manifest.fixtures)
    func progressive(_ fixture: Fixture) {
        expectPasses(C.suite.checkProgressive(fixture))
    }

    /// NukePNG previews an interlaced file once per newly completed Adam7 pass (scan number
    /// = passes complete, ending at 7) and a non-interlaced one whenever new rows arrived
    /// (row count, ending at the height, since the kit's last partial call has all the data).
    @Test(arguments: C.manifest.valid)
    func previewsFollowPassesAndRows(_ fixture: Fixture) throws {
        var suite = C.suite
        suite.options.progressiveFeedings = [.byteByByte, .whole, .equalChunks(count: 32)]
        let result = suite.checkProgressive(fixture)
        expectPasses(result)
        let height = try #require(fixture.height)
        #expect(!result.progressiveRuns.isEmpty)
        for run in result.progressiveRuns {
            #expect(run.previewCount >= 1, "\(run)")
            if fixture.isInterlaced == true {
                #expect(run.scanNumbers.count == run.previewCount && run.previewCount <= 7, "\(run)")
                #expect(run.scanNumbers.last == 7, "\(run)")
                #expect(zip(run.scanNumbers, run.scanNumbers.dropFirst()).allSatisfy { $0 < $1 }, "\(run)")
            } else {
                #expect(run.rowCounts.count == run.previewCount, "\(run)")
                #expect(run.rowCounts.last == height, "\(run)")
                #expect(zip(run.rowCounts, run.rowCounts.dropFirst()).allSatisfy { $0 < $1 }, "\(run)")
            }
        }
        if fixture.isInterlaced != true, let byteByByte = result.progressiveRuns.first(where: { $0.feeding == .byteByByte }) {
            #expect(byteByByte.rowCounts == Array(1...height), "\(byteByByte)")
        }
    }

    @Test(arguments: C.manifest.valid)
    func roundTrip(_ fixture: Fixture) {
        expectPasses(C.suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    /// The same round trip through an interlaced PNG.
    @Test(arguments: C.manifest.valid)
    func progressiveRoundTrip(_ fixture: Fixture) {
        var suite = C.suite
        suite.options.encodingOptions.isProgressive = true
        expectPasses(suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    @Test(arguments: C.manifest.valid)
    func limits(_ fixture: Fixture) {
        expectPasses(C.suite.checkLimits(fixture))
    }

    @Test func concurrency() async {
        expectPasses(await C.suite.checkConcurrency(), minimumCases: 1)
    }

    @Test(.enabled(if: PNGConformance.corporaExist), arguments: C.corpusFiles)
    func corpusFile(_ fixture: Fixture) {
        expectPasses(C.suite.checkRobustness(fixture))
        if fixture.kind == .invalid {
            expectPasses(C.suite.checkInvalidInput(fixture))
        }
    }

    @Test(.enabled(if: PNGConformance.corporaExist))
    func corporaHoldTheKnownFiles() {
        let names = Set(C.corpusFiles.map(\.file))
        for name in ["basn0g01.png", "huge_IDAT.png", "truncated_image.png", "broken.png"] {
            #expect(names.contains(name))
        }
    }
}
