import Foundation
import NukeConformance
import NukeCore
import NukePNG
import Testing

/// The conformance kit run against NukePNG over Fixtures/png, one test per check and
/// fixture, plus the public corpora in ../shared/corpora/png when present.
enum PNGConformance {
    /// Every prefix of a PNG costs a decode of the prefix, so the 46 KiB Adam7 fixture alone
    /// would take 46,000 decodes (13 s in a debug build): files over 16 KiB are cut at a
    /// stride instead (about 900 prefixes).
    static let plan: ConformancePlan = {
        var options = ConformanceSuite.Options()
        options.exhaustiveTruncationLimit = 16 * 1024
        options.roundTripPreservesOrientation = true   // NukePNG writes the eXIf chunk back
        return ConformancePlan(codec: .png, format: "png", testFile: #filePath, corpusExtensions: ["png"],
                               options: options, expectation: expectation)
    }()
    static var suite: ConformanceSuite { plan.suite }
    static var manifest: FixtureManifest { plan.manifest }

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

    @Test func manifestLoads() {
        #expect(C.plan.manifestError == nil)
        #expect(C.manifest.format == "png")
        #expect(!C.manifest.valid.isEmpty && !C.manifest.invalid.isEmpty)
    }

    /// The kit's standard checks over every fixture (ConformancePlan.cases).
    @Test(arguments: C.plan.cases)
    func conformance(_ check: ConformanceCase) async {
        let result = await C.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(.enabled(if: C.plan.hasCorpus), arguments: C.plan.corpusCases)
    func corpus(_ check: ConformanceCase) async {
        let result = await C.plan.run(check)
        #expect(result.passed, "\(result)")
    }

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
    func progressiveRoundTrip(_ fixture: Fixture) {
        var suite = C.suite
        suite.options.encodingOptions.isProgressive = true
        expectPasses(suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    @Test(.enabled(if: C.plan.hasCorpus))
    func corporaHoldTheKnownFiles() {
        let names = Set(C.plan.corpusFiles.map(\.file))
        for name in ["basn0g01.png", "huge_IDAT.png", "truncated_image.png", "broken.png"] {
            #expect(names.contains(name))
        }
    }
}
