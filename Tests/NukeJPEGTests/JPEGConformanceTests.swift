import Foundation
import NukeConformance
import NukeCore
import NukeJPEG
import Testing

/// The conformance kit run against NukeJPEG over Fixtures/jpeg, one test per check and
/// fixture, plus the public corpora in ../shared/corpora/jpeg when present.
enum JPEGConformance {
    /// The repository root: three levels up from Tests/NukeJPEGTests/JPEGConformanceTests.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Fixtures/jpeg")
    static let corpora = root.deletingLastPathComponent().appendingPathComponent("shared/corpora/jpeg")
    static let corporaExist = FileManager.default.fileExists(atPath: corpora.path)

    /// The manifest; empty when it cannot be read (``manifestLoads`` then fails).
    static let manifest = (try? FixtureManifest.load(from: fixtures)) ?? FixtureManifest(format: "jpeg", directory: fixtures, fixtures: [])

    static let suite: ConformanceSuite = {
        var options = ConformanceSuite.Options()
        options.encodingOptions.quality = 1
        options.roundTripPreservesOrientation = true   // NukeJPEG writes the EXIF block back
        return ConformanceSuite(codec: .jpeg, manifest: manifest, options: options)
    }()

    /// Every JPEG in the corpora, with what is known about it.
    static let corpusFiles: [Fixture] = {
        guard let enumerator = FileManager.default.enumerator(at: corpora, includingPropertiesForKeys: nil) else { return [] }
        return enumerator.compactMap { $0 as? URL }
            .filter { ["jpg", "jpeg"].contains($0.pathExtension.lowercased()) }
            .sorted { $0.path < $1.path }
            .map(expectation)
    }()

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

    @Test func manifestLoads() throws {
        let manifest = try FixtureManifest.load(from: C.fixtures)
        #expect(manifest.format == "jpeg")
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

    /// At quality 1 (4:4:4 chroma), a JPEG round trip of these small, detailed fixtures keeps
    /// PSNR above 30 dB; at the default 0.9 some fall to 21 dB, as with `cjpeg -quality 90`.
    @Test(arguments: C.manifest.valid)
    func roundTrip(_ fixture: Fixture) {
        expectPasses(C.suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    /// The same round trip through a progressive JPEG.
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

    @Test(.enabled(if: JPEGConformance.corporaExist), arguments: C.corpusFiles)
    func corpusFile(_ fixture: Fixture) {
        expectPasses(C.suite.checkRobustness(fixture))
        if fixture.kind == .invalid {
            expectPasses(C.suite.checkInvalidInput(fixture))
        }
    }

    @Test(.enabled(if: JPEGConformance.corporaExist))
    func corporaHoldTheKnownFiles() {
        let names = Set(C.corpusFiles.map(\.file))
        for name in ["truncated_jpeg.jpg", "monkey12.jpg", "progressive.jpeg", "testorig.jpg"] {
            #expect(names.contains(name))
        }
    }
}
