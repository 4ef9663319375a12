import Foundation
import NukeConformance
import NukeCore
import NukeHEIF
import Testing

/// The conformance kit run against NukeHEIF over Fixtures/heif, plus the public corpora in
/// ../shared/corpora/heif when present: libheif's fuzzing corpus and test files, SDWebImage's and
/// Nuke's HEIC/AVIF test images. Every corpus file must end in an image or an ImageCodecError.
enum HEIFConformance {
    static let plan = ConformancePlan(codec: .heic, format: "heif", testFile: #filePath, corpusExtensions: ["heic", "heif", "avif"]) { url in
        Fixture(url: url, kind: .unknown)
    }

    /// The codec the kit runs for a fixture: AVIF files through the AVIF registration.
    static func plan(for fixture: Fixture) -> ConformancePlan {
        fixture.file.hasSuffix(".avif") ? avifPlan : plan
    }

    static let avifPlan = ConformancePlan(codec: .avif, format: "heif", testFile: #filePath, corpusExtensions: ["avif"])
}

@Suite struct HEIFConformanceTests {
    typealias C = HEIFConformance

    @Test(arguments: C.plan.cases.filter { $0.fixture?.file.hasSuffix(".avif") != true })
    func heic(_ check: ConformanceCase) async {
        let result = await C.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(arguments: C.avifPlan.cases.filter { $0.fixture?.file.hasSuffix(".avif") == true })
    func avif(_ check: ConformanceCase) async {
        let result = await C.avifPlan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(.enabled(if: C.plan.hasCorpus), arguments: C.plan.corpusCases)
    func corpus(_ check: ConformanceCase) async {
        let result = await C.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test func manifestHoldsTheFixtures() {
        #expect(C.plan.manifestError == nil)
        #expect(C.plan.manifest.valid.count >= 7)
        #expect(C.plan.manifest.invalid.count >= 2)
    }
}
