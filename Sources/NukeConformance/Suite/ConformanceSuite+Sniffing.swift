import Foundation
import NukeCore

extension ConformanceSuite {
    /// Checks that `ImageType(data)` recognises the fixture as the codec's format.
    ///
    /// A valid fixture must sniff as `ImageCodecInfo.type`. An invalid or unknown one may be
    /// unrecognisable (an empty file, a broken signature), but when it is recognised it must
    /// be as the codec's format, never as another one.
    public func checkSniffing(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.sniffing, fixture)
        guard let data = load(fixture, into: &result) else { return result }
        result.caseCount += 1
        let sniffed = ImageType(data)
        switch fixture.kind {
        case .valid:
            if sniffed != codec.info.type {
                result.fail(fixture, "sniffed as \(sniffed?.name ?? "nothing"), expected \(codec.info.type.name)")
            }
        case .invalid, .unknown:
            if let sniffed, sniffed != codec.info.type {
                result.fail(fixture, "sniffed as \(sniffed.name), expected \(codec.info.type.name) or nothing")
            }
        }
        return result
    }
}
