import Foundation
import NukeCore

extension ConformanceSuite {
    /// Decodes seeded random corruptions of a valid fixture — one to four bytes replaced —
    /// one-shot and fed progressively in eight chunks.
    ///
    /// Each must decode or throw `ImageCodecError`; an error of another type is a
    /// failure, and a crash ends the test process. ``Options/corruptionCount`` variants per
    /// fixture, reproducible from ``Options/seed``.
    public func checkCorruption(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.corruption, fixture)
        guard fixture.kind == .valid, codec.makeDecoder != nil else {
            if fixture.kind != .valid { result.skipped.append("\(fixture.file): not a valid fixture") }
            return result
        }
        guard let data = load(fixture, into: &result), !data.isEmpty else { return result }
        var generator = SeededGenerator(seed: options.seed ^ UInt64(truncatingIfNeeded: data.count &* 0x9E37_79B9))
        let original = [UInt8](data)
        var reported = 0
        for variant in 0..<max(0, options.corruptionCount) {
            var bytes = original
            var edits: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let offset = Int.random(in: 0..<bytes.count, using: &generator)
                let value = UInt8.random(in: 0...255, using: &generator)
                edits.append("\(offset)=\(value)")
                bytes[offset] = value
            }
            let mutated = Data(bytes)
            for (route, outcome) in [("one-shot", decodeOnce(mutated)), ("progressive", decodeInChunks(mutated))] {
                result.caseCount += 1
                guard case .foreignError(let text) = outcome else { continue }
                reported += 1
                if reported <= 5 {
                    result.fail(fixture, "variant \(variant) (bytes \(edits.joined(separator: ", "))), \(route): threw an error that is not an ImageCodecError: \(text)")
                }
            }
        }
        if reported > 5 { result.fail(fixture, "\(reported - 5) more variants fail the same way") }
        return result
    }
}
