import Foundation
import NukeConformance
import NukeCore
import NukeICO
import NukePNG
import Testing

/// The conformance kit run against NukeICO over Fixtures/ico (icons) and Fixtures/cur (cursors).
enum ICOConformance {
    static let ico = ConformancePlan(codec: .ico, format: "ico", testFile: #filePath, corpusExtensions: ["ico"])
    static let cur = ConformancePlan(codec: .cur, format: "cur", testFile: #filePath, corpusExtensions: ["cur"])
}

@Suite struct ICOConformanceTests {
    @Test func manifestsLoad() {
        #expect(ICOConformance.ico.manifestError == nil)
        #expect(ICOConformance.cur.manifestError == nil)
        #expect(ICOConformance.ico.manifest.valid.count >= 6)
        #expect(ICOConformance.ico.manifest.invalid.count >= 3)
        #expect(ICOConformance.cur.manifest.valid.count >= 2)
    }

    @Test(arguments: ICOConformance.ico.cases)
    func icons(_ check: ConformanceCase) async {
        let result = await ICOConformance.ico.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(arguments: ICOConformance.cur.cases)
    func cursors(_ check: ConformanceCase) async {
        let result = await ICOConformance.cur.run(check)
        #expect(result.passed, "\(result)")
    }
}
