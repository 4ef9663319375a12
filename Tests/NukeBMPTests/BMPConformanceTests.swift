import Foundation
import NukeBMP
import NukeConformance
import NukeCore
import Testing

/// The conformance kit run against NukeBMP over Fixtures/bmp, one test per check and fixture,
/// plus a public corpus in ../shared/corpora/bmp when present (bmpsuite: `b/` files must fail,
/// the rest decode or fail cleanly).
enum BMPConformance {
    static let plan = ConformancePlan(codec: .bmp, format: "bmp", testFile: #filePath, corpusExtensions: ["bmp"]) { url in
        url.path.contains("/b/") ? Fixture(url: url, kind: .invalid) : Fixture(url: url, kind: .unknown)
    }
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
