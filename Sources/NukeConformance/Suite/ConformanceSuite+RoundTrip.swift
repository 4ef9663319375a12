import Foundation
import NukeCore

extension ConformanceSuite {
    /// Decodes a valid fixture, encodes the image with the codec's encoder, decodes the
    /// result and compares it with the first decode.
    ///
    /// Lossless fixtures (`lossless: true`) must come back exactly; others within
    /// ``Options/lossyRoundTripTolerance``. An ICC profile must survive when
    /// `ImageEncodingOptions.preservesColorProfile` is set. Fixtures with a 16-bit
    /// reference also round-trip a 16-bit decode when the codec has
    /// `ImageCodecCapabilities.highBitDepth`. Skipped for a codec without an encoder.
    public func checkRoundTrip(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.roundTrip, fixture)
        guard fixture.kind == .valid, codec.makeDecoder != nil else {
            if fixture.kind != .valid { result.skipped.append("\(fixture.file): not a valid fixture") }
            return result
        }
        guard let makeEncoder = codec.makeEncoder else {
            result.skipped.append("\(fixture.file): the codec has no encoder")
            return result
        }
        guard let data = load(fixture, into: &result) else { return result }
        let tolerance: ImageComparison.Tolerance = fixture.isLossless == true ? .exact : options.lossyRoundTripTolerance
        var passes: [(String, Bool)] = [("8-bit", false)]
        if options.roundTripsHighBitDepth, fixture.reference16 != nil, codec.info.capabilities.contains(.highBitDepth) {
            passes.append(("16-bit", true))
        }
        for (label, highBitDepth) in passes {
            result.caseCount += 1
            guard let original = expectImage(decodeOnce(data, highBitDepth: highBitDepth), fixture, "\(label) decode", &result)?.image else { continue }
            var encodingOptions = options.encodingOptions
            encodingOptions.prefersHighBitDepth = highBitDepth
            // A lossless fixture must come back exactly through a codec's lossless mode (WebP).
            if fixture.isLossless == true { encodingOptions.isLossless = true }
            let encoded: Data
            do {
                encoded = try makeEncoder(encodingOptions).encode(original)
            } catch {
                result.fail(fixture, "\(label): encoding \(original.bitmap) failed: \(error)")
                continue
            }
            if ImageType(encoded) != codec.info.type {
                result.fail(fixture, "\(label): the encoder's output sniffs as \(ImageType(encoded)?.name ?? "nothing"), expected \(codec.info.type.name)")
            }
            guard let decoded = expectImage(decodeOnce(encoded, highBitDepth: highBitDepth), fixture, "\(label) decode of the encoded image", &result)?.image else { continue }
            let comparison = ImageComparison(decoded.bitmap, reference: original.bitmap, tolerance: tolerance)
            if !comparison.isMatch {
                result.fail(fixture, "\(label): the round trip changed the pixels (tolerance \(tolerance)): \(comparison)")
            }
            if encodingOptions.preservesColorProfile, let icc = original.iccProfile, decoded.iccProfile != icc {
                result.fail(fixture, "\(label): the ICC profile (\(icc.count) bytes) did not survive: got \(decoded.iccProfile.map { "\($0.count) bytes" } ?? "none")")
            }
            if options.roundTripPreservesOrientation, decoded.orientation != original.orientation {
                result.fail(fixture, "\(label): orientation \(original.orientation) came back as \(decoded.orientation)")
            }
        }
        return result
    }
}
