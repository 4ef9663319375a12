import Foundation
import NukeConformance
import NukeCore
import NukeGIF
import Testing

/// The conformance kit run against NukeGIF over Fixtures/gif, one test per check and fixture,
/// plus the public corpora in ../shared/corpora/gif when present.
enum GIFConformance {
    /// The manifest; empty when it cannot be read (``GIFConformanceTests/manifestLoads()`` then fails).
    static let manifest = (try? FixtureManifest.load(from: GIFTestPaths.fixtures))
        ?? FixtureManifest(format: "gif", directory: GIFTestPaths.fixtures, fixtures: [])

    static let suite = ConformanceSuite(codec: .gif, manifest: manifest)

    /// Every GIF in the corpora: Pillow's decompression bomb, zero-width file and a
    /// not-a-GIF regression file must fail; the rest decode.
    static let corpusFiles: [Fixture] = GIFTestPaths.corpusFiles().map { path in
        let url = GIFTestPaths.corpora.appendingPathComponent(path)
        switch url.lastPathComponent {
        case "decompression_bomb.gif": return Fixture(url: url, kind: .invalid, expectedError: .limit)
        case "zero_width.gif", "zero-loop-count.gif": return Fixture(url: url, kind: .invalid, expectedError: .corrupt)
        default: return Fixture(url: url, kind: .valid)
        }
    }
}

@Suite struct GIFConformanceTests {
    typealias C = GIFConformance

    private func expectPasses(
        _ result: ConformanceResult, minimumCases: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if minimumCases > 0 {
            #expect(result.caseCount >= minimumCases, "\(result)", sourceLocation: sourceLocation)
        }
        #expect(result.failures.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    @Test func manifestLoads() throws {
        let manifest = try FixtureManifest.load(from: GIFTestPaths.fixtures)
        #expect(manifest.format == "gif")
        #expect(manifest.valid.count >= 10)
        #expect(manifest.invalid.count >= 2)
    }

    @Test(arguments: C.manifest.fixtures)
    func sniffing(_ fixture: Fixture) {
        expectPasses(C.suite.checkSniffing(fixture))
    }

    @Test(arguments: C.manifest.valid)
    func referenceDecode(_ fixture: Fixture) {
        expectPasses(C.suite.checkReferenceDecode(fixture), minimumCases: 1)
    }

    @Test(arguments: C.manifest.invalid)
    func invalidInput(_ fixture: Fixture) {
        expectPasses(C.suite.checkInvalidInput(fixture))
    }

    @Test(arguments: C.manifest.valid)
    func truncation(_ fixture: Fixture) {
        expectPasses(C.suite.checkTruncation(fixture), minimumCases: 1)
    }

    @Test(arguments: C.manifest.valid)
    func corruption(_ fixture: Fixture) {
        expectPasses(C.suite.checkCorruption(fixture), minimumCases: 1)
    }

    /// A preview per frame, numbered 1, 2, 3..., and a final image equal to a one-shot decode.
    @Test(arguments: C.manifest.valid)
    func progressive(_ fixture: Fixture) throws {
        var suite = C.suite
        suite.options.progressiveFeedings = [.byteByByte, .equalChunks(count: 32)]
        let result = suite.checkProgressive(fixture)
        expectPasses(result)
        let frames = try #require(GIFFixture.all.first { $0.name == fixture.file }).frames
        for run in result.progressiveRuns {
            // The kit's last partial call holds every byte: every frame has had its preview.
            #expect(run.scanNumbers == Array(1...frames), "\(run)")
        }
    }

    @Test(arguments: C.manifest.valid)
    func roundTrip(_ fixture: Fixture) {
        expectPasses(C.suite.checkRoundTrip(fixture), minimumCases: 1)
    }

    /// Still fixtures only: the kit derives the exact-fit `maxFrameCount` from `Image.frames`,
    /// which holds only the first frame when the rest are lazy (``ImageContainer/animation``);
    /// the frame-count limit is tested in ``ImageDecodersGIFTests``.
    @Test(arguments: C.manifest.valid.filter { fixture in GIFFixture.all.first { $0.name == fixture.file }?.frames == 1 })
    func limits(_ fixture: Fixture) {
        expectPasses(C.suite.checkLimits(fixture))
    }

    @Test func concurrency() async {
        expectPasses(await C.suite.checkConcurrency(), minimumCases: 1)
    }

    @Test(.enabled(if: gifCorporaExist), arguments: C.corpusFiles)
    func corpusFile(_ fixture: Fixture) {
        expectPasses(C.suite.checkRobustness(fixture))
        if fixture.kind == .invalid {
            expectPasses(C.suite.checkInvalidInput(fixture))
        }
    }
}
