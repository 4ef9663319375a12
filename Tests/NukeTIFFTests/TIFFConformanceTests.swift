import Foundation
import NukeConformance
import NukeCore
import NukeTIFF
import Testing

/// The conformance kit run against NukeTIFF over Fixtures/tiff (scripts/make-tiff-fixtures.py),
/// plus the public corpora in ../shared/corpora/tiff when present: every corpus file must end in
/// an image or an ImageCodecError.
enum TIFFConformance {
    static let plan = ConformancePlan(codec: .tiff, format: "tiff", testFile: #filePath, corpusExtensions: ["tif", "tiff"]) { url in
        Fixture(url: url, kind: .unknown)
    }
}

@Suite struct TIFFConformanceTests {
    typealias C = TIFFConformance

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
        #expect(C.plan.manifest.valid.count >= 30)
        #expect(C.plan.manifest.invalid.count >= 3)
    }
}
