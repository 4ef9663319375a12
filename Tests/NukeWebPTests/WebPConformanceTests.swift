import Foundation
import NukeConformance
import NukeCore
import NukeWebP
import Testing

/// The conformance kit run against NukeWebP over Fixtures/webp, plus the public corpora in
/// ../shared/corpora/webp when present.
enum WebPConformance {
    /// Every corpus file is a valid WebP (dwebp decodes them all, image-rs's `panic.webp`
    /// regression file included).
    static let plan = ConformancePlan(codec: .webp, format: "webp", testFile: #filePath, corpusExtensions: ["webp"]) { url in
        Fixture(url: url, kind: .valid)
    }
}

@Suite struct WebPConformanceTests {
    typealias C = WebPConformance

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
        #expect(C.plan.manifest.valid.count >= 12)
        #expect(C.plan.manifest.invalid.count >= 4)
    }

    /// Still images: previews with growing row counts, fed byte by byte and in 32 chunks, and a
    /// final image equal to a one-shot decode.
    @Test(arguments: C.plan.manifest.valid)
    func progressive(_ fixture: Fixture) throws {
        var suite = C.plan.suite
        suite.options.progressiveFeedings = [.byteByByte, .equalChunks(count: 32), .randomChunks(seed: 7)]
        let result = suite.checkProgressive(fixture)
        #expect(result.passed, "\(result)")
    }
}
