import Foundation
import NukeConformance
import NukeCore
import NukeSession
import NukeJPEG
import Testing

/// The conformance kit run against NukeJPEG over Fixtures/jpeg, one test per check and
/// fixture, plus the public corpora in ../shared/corpora/jpeg when present.
enum JPEGConformance {
    static let plan: ConformancePlan = {
        var options = ConformanceSuite.Options()
        options.encodingOptions.quality = 1
        options.roundTripPreservesOrientation = true   // NukeJPEG writes the EXIF block back
        return ConformancePlan(codec: .jpeg, format: "jpeg", testFile: #filePath, corpusExtensions: ["jpg", "jpeg"],
                               options: options, expectation: expectation)
    }()
    static var suite: ConformanceSuite { plan.suite }
    static var manifest: FixtureManifest { plan.manifest }

    /// What a corpus file must do. Unknown files only must decode or throw ImageCodecError.
    static func expectation(for url: URL) -> Fixture {
        let name = url.lastPathComponent
        let folder = url.path
        switch name {
        case "truncated_jpeg.jpg":
            return Fixture(url: url, kind: .invalid, expectedError: .incomplete)   // Pillow: must report truncation
        case "monkey12.jpg":
            return Fixture(url: url, kind: .invalid, expectedError: .unsupported)   // 12-bit, 8-bit build
        case "progressive.jpeg", "tricky_progressive.jpeg":
            return Fixture(url: url, kind: .valid, width: 450, height: 300)
        case "testorig.jpg", "testimgint.jpg", "testimgari.jpg":
            return Fixture(url: url, kind: .valid, width: 227, height: 149)
        default:
            if folder.contains("kean_Nuke") || name.hasPrefix("hopper") || name.hasPrefix("pil_sample") {
                return Fixture(url: url, kind: .valid)
            }
            return Fixture(url: url, kind: .unknown)   // decode or throw ImageCodecError
        }
    }
}

@Suite struct JPEGConformanceTests {
    typealias C = JPEGConformance

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
        #expect(C.manifest.format == "jpeg")
        #expect(C.manifest.valid.count >= 30)
        #expect(C.manifest.invalid.count >= 5)
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

    /// NukeJPEG returns a preview each time a scan of a progressive file completes (the next
    /// SOS or the EOI has arrived), arithmetic-coded files included; one per call, of the next
    /// scan not yet shown, so calling again with the same data returns the next pending one.
    /// Baseline files give none. The kit drains each chunk (as ImageDecodingSession does) and
    /// its last partial call holds all the data, so every feeding shows every scan.
    @Test(arguments: C.manifest.valid)
    func previewsFollowScans(_ fixture: Fixture) throws {
        var suite = C.suite
        suite.options.progressiveFeedings = [.byteByByte, .whole, .equalChunks(count: 32)]
        let result = suite.checkProgressive(fixture)
        expectPasses(result)
        let scans = try #require(fixture.scans)
        let runs = Dictionary(uniqueKeysWithValues: result.progressiveRuns.map { ($0.feeding, $0) })
        #expect(runs[.whole] != nil && runs[.equalChunks(count: 32)] != nil)
        #expect(runs[.byteByByte] != nil || fixture.isProgressive != true, "progressive fixtures are small enough to feed byte by byte")
        for run in runs.values {
            if fixture.isProgressive == true {
                #expect(run.previewCount == scans, "\(run)")
                #expect(run.scanNumbers == Array(1...scans), "\(run)")
            } else {
                #expect(run.previewCount == 0, "\(run)")
            }
        }
    }

    /// With one partial call per chunk (Nuke's pipeline), a chunk shows at most one new scan:
    /// the whole file at once gives the first scan's preview only.
    @Test(arguments: C.manifest.valid.filter { $0.isProgressive == true })
    func onePreviewPerPartialCall(_ fixture: Fixture) throws {
        var suite = C.suite
        suite.options.drainsPreviews = false
        suite.options.progressiveFeedings = [.whole, .equalChunks(count: 8)]
        let result = suite.checkProgressive(fixture)
        expectPasses(result)
        let scans = try #require(fixture.scans)
        for run in result.progressiveRuns {
            #expect(run.partialCallCount == (run.feeding == .whole ? 1 : 8), "\(run)")
            #expect(run.scanNumbers == Array(1...run.previewCount), "\(run)")
            #expect(run.previewCount >= 1 && run.previewCount <= min(scans, run.partialCallCount), "\(run)")
        }
    }

    /// The same round trip through a progressive JPEG.
    @Test(arguments: C.manifest.valid)
    func progressiveRoundTrip(_ fixture: Fixture) {
        var suite = C.suite
        suite.options.encodingOptions.isProgressive = true
        expectPasses(suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    @Test(.enabled(if: C.plan.hasCorpus))
    func corporaHoldTheKnownFiles() {
        let names = Set(C.plan.corpusFiles.map(\.file))
        for name in ["truncated_jpeg.jpg", "monkey12.jpg", "progressive.jpeg", "testorig.jpg"] {
            #expect(names.contains(name))
        }
    }
}
