import Foundation
import NukeConformance
import NukeCore
import NukeJXL
import Testing

/// The conformance kit run against NukeJXL over Fixtures/jxl, plus a public corpus in
/// ../shared/corpora/jxl when present (absent: the corpus test is skipped).
enum JXLConformance {
    static let plan: ConformancePlan = {
        var options = ConformanceSuite.Options()
        options.roundTripPreservesOrientation = true   // NukeJXL writes the orientation in the header
        return ConformancePlan(codec: .jxl, format: "jxl", testFile: #filePath, corpusExtensions: ["jxl"], options: options)
    }()
}

@Suite struct JXLConformanceTests {
    typealias C = JXLConformance

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

    @Test func manifestHoldsTheFixtures() {
        #expect(C.plan.manifestError == nil)
        #expect(C.plan.manifest.valid.count >= 10)
        #expect(C.plan.manifest.invalid.count >= 3)
    }

    /// Fed byte by byte, in 32 chunks and in random chunks, every fixture ends in the one-shot image.
    @Test(arguments: C.plan.manifest.valid)
    func progressive(_ fixture: Fixture) throws {
        var suite = C.plan.suite
        suite.options.progressiveFeedings = [.byteByByte, .equalChunks(count: 32), .randomChunks(seed: 7)]
        let result = suite.checkProgressive(fixture)
        #expect(result.passed, "\(result)")
    }
}
