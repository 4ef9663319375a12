import Foundation
import NukeCore

extension ConformanceSuite {
    /// Checks that an invalid fixture makes the decoder throw `ImageCodecError` with the
    /// manifest's `expected_error` code (any code when it gives none), through the codec's
    /// decoder and through a registry.
    ///
    /// A codec may decline data that does not sniff as its format (the registry then throws
    /// `.noCodec`); declining data that does is a failure.
    public func checkInvalidInput(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.invalidInput, fixture)
        guard fixture.kind == .invalid, codec.makeDecoder != nil else {
            if fixture.kind != .invalid { result.skipped.append("\(fixture.file): not an invalid fixture") }
            return result
        }
        guard let data = load(fixture, into: &result) else { return result }
        let recognised = ImageType(data) == codec.info.type
        for (route, outcome) in [("decoder", decodeOnce(data)), ("registry", decodeThroughRegistry(data))] {
            result.caseCount += 1
            switch outcome {
            case .error(let error) where error.code == .noCodec && route == "registry" && !recognised:
                result.skipped.append("\(fixture.file): \(route): not recognised as \(codec.info.type.name)")
            case .error(let error):
                if let expected = fixture.expectedError, error.code != expected.code {
                    result.fail(fixture, "\(route): threw \(error.code), expected \(expected.code) (\(error.message))")
                }
            case .declined where !recognised:
                result.skipped.append("\(fixture.file): \(route): the codec declined data that is not \(codec.info.type.name)")
            default:
                result.fail(fixture, "\(route): expected ImageCodecError \(fixture.expectedError?.code.rawValue ?? "(any code)"), got \(outcome)")
            }
        }
        return result
    }
}
