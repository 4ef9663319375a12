import Foundation
import NukeCore

extension ConformanceSuite {
    /// Checks that a file of any validity either decodes or throws `ImageCodecError`,
    /// one-shot, through a registry and fed progressively in random chunks — for public
    /// corpora whose files have no manifest entry.
    ///
    /// Fixtures of kind ``Fixture/Kind/unknown`` need nothing more. A valid fixture must also
    /// decode (with the manifest's size), an invalid one throw (with the expected code).
    public func checkRobustness(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.robustness, fixture)
        guard codec.makeDecoder != nil, let data = load(fixture, into: &result) else { return result }
        let routes: [(String, DecodeOutcome)] = [
            ("decoder", decodeOnce(data)),
            ("registry", decodeThroughRegistry(data)),
            ("progressive", decodeProgressively(data, feeding: .randomChunks(seed: options.seed))),
        ]
        for (route, outcome) in routes {
            result.caseCount += 1
            switch outcome {
            case .foreignError(let text):
                result.fail(fixture, "\(route): threw an error that is not an ImageCodecError: \(text)")
            case .image(let container):
                if fixture.kind == .invalid {
                    result.fail(fixture, "\(route): decoded \(container.image.bitmap), expected \(fixture.expectedError.map { "ImageCodecError \($0.code)" } ?? "an error")")
                } else if let (width, height) = expectedSize(fixture), container.image.width != width || container.image.height != height {
                    result.fail(fixture, "\(route): size \(container.image.width)×\(container.image.height), expected \(width)×\(height)")
                }
            case .error(let error):
                if fixture.kind == .valid, !(error.code == .noCodec && ImageType(data) != codec.info.type) {
                    result.fail(fixture, "\(route): expected an image, got \(outcome)")
                } else if let expected = fixture.expectedError, error.code != expected.code, error.code != .noCodec {
                    result.fail(fixture, "\(route): threw \(error.code), expected \(expected.code) (\(error.message))")
                }
            case .declined:
                if ImageType(data) == codec.info.type {
                    result.fail(fixture, "\(route): the codec declined data it recognises")
                }
            }
        }
        return result
    }

    /// Feeds `data` to one decoder as `feeding` says, then decodes it; the final outcome.
    func decodeProgressively(_ data: Data, feeding: ProgressiveFeeding) -> DecodeOutcome {
        var decoder: (any ImageDecoding)?
        for length in feeding.prefixLengths(count: data.count) {
            let prefix = data.prefix(length)
            if decoder == nil { decoder = makeDecoder(context(prefix, isCompleted: false)) }
            guard let decoder else { continue }
            let limit = options.drainsPreviews ? max(1, options.maximumPreviewsPerChunk) : 1
            var previews = 0
            while previews < limit, decoder.decodePartiallyDownloadedData(prefix) != nil { previews += 1 }
        }
        guard let decoder else { return decodeOnce(data) }
        return outcome { try decoder.decode(data) }
    }
}
