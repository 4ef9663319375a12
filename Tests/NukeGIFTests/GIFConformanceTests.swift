import Foundation
import NukeConformance
import NukeCore
import NukeGIF
import Testing

/// The conformance kit run against NukeGIF over Fixtures/gif, plus the public corpora in
/// ../shared/corpora/gif when present.
enum GIFConformance {
    /// Pillow's decompression bomb, zero-width file and a not-a-GIF regression file must fail;
    /// the rest of the corpus decodes.
    static let plan = ConformancePlan(codec: .gif, format: "gif", testFile: #filePath, corpusExtensions: ["gif"]) { url in
        switch url.lastPathComponent {
        case "decompression_bomb.gif": return Fixture(url: url, kind: .invalid, expectedError: .limit)
        case "zero_width.gif", "zero-loop-count.gif": return Fixture(url: url, kind: .invalid, expectedError: .corrupt)
        default: return Fixture(url: url, kind: .valid)
        }
    }
}

@Suite struct GIFConformanceTests {
    typealias C = GIFConformance

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

    /// The kit's animation check examines every animated fixture (still ones it skips).
    @Test(arguments: C.plan.manifest.valid.filter { fixture in (GIFFixture.all.first { $0.name == fixture.file }?.frames ?? 0) > 1 })
    func animatedFixturesAreChecked(_ fixture: Fixture) async {
        let result = await C.plan.run(ConformanceCase(check: .animation, fixture: fixture, minimumCases: 1))
        #expect(result.passed, "\(result)")
    }

    @Test func manifestAndCorpusHoldTheKnownFiles() {
        #expect(C.plan.manifestError == nil)
        #expect(C.plan.manifest.valid.count >= 8)
        if C.plan.hasCorpus {
            #expect(C.plan.corpusFiles.contains { $0.file == "decompression_bomb.gif" })
        }
    }

    /// A preview per frame, numbered 1, 2, 3..., and a final image equal to a one-shot decode.
    @Test(arguments: C.plan.manifest.valid)
    func progressive(_ fixture: Fixture) throws {
        var suite = C.plan.suite
        suite.options.progressiveFeedings = [.byteByByte, .equalChunks(count: 32)]
        let result = suite.checkProgressive(fixture)
        #expect(result.passed, "\(result)")
        let frames = try #require(GIFFixture.all.first { $0.name == fixture.file }).frames
        for run in result.progressiveRuns {
            // The kit's last partial call holds every byte: every frame has had its preview.
            #expect(run.scanNumbers == Array(1...frames), "\(run)")
        }
    }

}
