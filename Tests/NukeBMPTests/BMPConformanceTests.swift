import Foundation
import NukeBMP
import NukeConformance
import NukeCore
import Testing

/// The conformance kit run against NukeBMP over Fixtures/bmp, one test per check and fixture,
/// plus a public corpus in ../shared/corpora/bmp when present: each file decodes or fails with
/// `ImageCodecError` (bmpsuite's `b/` files include some browsers draw, such as bad densities,
/// a bad file size, RLE overruns and out-of-range indices, which NukeBMP tolerates with a warning).
enum BMPConformance {
    static let plan = ConformancePlan(codec: .bmp, format: "bmp", testFile: #filePath, corpusExtensions: ["bmp"])
}

@Suite struct BMPConformanceTests {
    @Test func manifestLoads() {
        #expect(BMPConformance.plan.manifestError == nil)
        #expect(BMPConformance.plan.manifest.format == "bmp")
        #expect(BMPConformance.plan.manifest.valid.count >= 30)
        #expect(BMPConformance.plan.manifest.invalid.count >= 8)
    }

    @Test(arguments: BMPConformance.plan.cases)
    func conformance(_ check: ConformanceCase) async {
        let result = await BMPConformance.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(.enabled(if: BMPConformance.plan.hasCorpus), arguments: BMPConformance.plan.corpusCases)
    func corpus(_ check: ConformanceCase) async {
        let result = await BMPConformance.plan.run(check)
        #expect(result.passed, "\(result)")
    }
}
