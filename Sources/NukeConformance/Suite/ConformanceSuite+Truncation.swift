import Foundation
import NukeCore

extension ConformanceSuite {
    /// The prefix lengths the truncation check decodes for a file of `count` bytes.
    ///
    /// Every length below `count` when the file is within
    /// ``Options/exhaustiveTruncationLimit``; otherwise the first and last 64 lengths and
    /// every ``Options/truncationStride``-th one between them, from a seeded offset.
    public func truncationLengths(count: Int) -> [Int] {
        guard count > options.exhaustiveTruncationLimit else { return Array(0..<count) }
        var generator = SeededGenerator(seed: options.seed ^ UInt64(count))
        let stride = max(1, options.truncationStride)
        var lengths = Set(0..<min(64, count))
        lengths.formUnion(max(0, count - 64)..<count)
        var length = 64 + Int.random(in: 0..<stride, using: &generator)
        while length < count {
            lengths.insert(length)
            length += stride
        }
        return lengths.sorted()
    }

    /// Checks every prefix of a valid fixture, decoded as complete data on a fresh decoder.
    ///
    /// Each must throw `ImageCodecError` with code `.incomplete` or `.corrupt`, or return
    /// an image of the full size (decoders may fill in what is missing), or be declined
    /// (data too short to recognise). Any other error code, or an error of another type, is
    /// a failure. A crash ends the test process.
    public func checkTruncation(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.truncation, fixture)
        guard fixture.kind == .valid, codec.makeDecoder != nil else {
            if fixture.kind != .valid { result.skipped.append("\(fixture.file): not a valid fixture") }
            return result
        }
        guard let data = load(fixture, into: &result) else { return result }
        let full = decodeOnce(data).container?.image
        let size = full.map { ($0.width, $0.height) } ?? expectedSize(fixture)
        var reported = 0
        func fail(_ length: Int, _ message: String) {
            reported += 1
            if reported <= 5 {
                result.fail(fixture, "prefix of \(length) of \(data.count) bytes: \(message)")
            } else if reported == 6 {
                result.fail(fixture, "more prefixes fail the same way; the rest are not listed")
            }
        }
        for length in truncationLengths(count: data.count) {
            result.caseCount += 1
            let prefix = data.prefix(length)
            switch decodeOnce(prefix) {
            case .declined:
                if length >= 64, ImageType(prefix) == codec.info.type {
                    fail(length, "the codec declined data it recognises")
                }
            case .error(let error):
                if error.code != .incomplete && error.code != .corrupt {
                    fail(length, "threw \(error.code), expected incomplete or corrupt (\(error.message))")
                }
            case .foreignError(let text):
                fail(length, "threw an error that is not an ImageCodecError: \(text)")
            case .image(let container):
                if let (width, height) = size, container.image.width != width || container.image.height != height {
                    fail(length, "returned a \(container.image.width)×\(container.image.height) image, expected \(width)×\(height) or an error")
                }
                if container.isPreview {
                    fail(length, "decode(_:) returned a preview")
                }
            }
        }
        return result
    }
}
