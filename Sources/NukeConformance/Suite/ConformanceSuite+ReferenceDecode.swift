import Foundation
import NukeCore

extension ConformanceSuite {
    /// Checks that a valid fixture decodes to its reference and reports the manifest's
    /// metadata, through the codec's decoder and through an `ImageDecoderRegistry` holding
    /// only the codec.
    ///
    /// Compares pixels with ``ImageComparison`` within the fixture's tolerance; the size,
    /// orientation, ICC profile (SHA-256 and size), gamma and sRGB intent when the manifest
    /// gives them. With a `reference16`, also decodes with
    /// `ImageDecodingContext.prefersHighBitDepth` and compares with it.
    public func checkReferenceDecode(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.referenceDecode, fixture)
        guard fixture.kind == .valid, codec.makeDecoder != nil else {
            if fixture.kind != .valid { result.skipped.append("\(fixture.file): not a valid fixture") }
            return result
        }
        guard let data = load(fixture, into: &result) else { return result }
        let reference: Bitmap?, reference16: Bitmap?
        do {
            reference = try fixture.referenceBitmap()
            reference16 = try fixture.reference16Bitmap()
        } catch {
            result.fail(fixture, "cannot read the reference decode: \(error)")
            return result
        }
        let tolerance = fixture.tolerance ?? 0

        for (route, outcome) in [("decoder", decodeOnce(data)), ("registry", decodeThroughRegistry(data))] {
            result.caseCount += 1
            guard let container = expectImage(outcome, fixture, route, &result) else { continue }
            verify(container, fixture, route, reference: reference, named: fixture.reference, tolerance: .maxDifference(tolerance), &result)
        }
        if let reference16 {
            for (route, outcome) in [("16-bit decoder", decodeOnce(data, highBitDepth: true)), ("16-bit registry", decodeThroughRegistry(data, highBitDepth: true))] {
                result.caseCount += 1
                guard let container = expectImage(outcome, fixture, route, &result) else { continue }
                let scaled = tolerance > Int.max / 257 ? Int.max : tolerance * 257
                verify(container, fixture, route, reference: reference16, named: fixture.reference16, tolerance: .maxDifference(scaled), &result)
            }
        }
        return result
    }

    /// Returns the image of a decode that must succeed, recording a failure otherwise.
    func expectImage(_ outcome: DecodeOutcome, _ fixture: Fixture, _ route: String, _ result: inout ConformanceResult) -> ImageContainer? {
        guard let container = outcome.container else {
            result.fail(fixture, "\(route): expected an image, got \(outcome)")
            return nil
        }
        if container.isPreview {
            result.fail(fixture, "\(route): the final decode returned a preview (isPreview == true)")
        }
        if let type = container.type, type != codec.info.type {
            result.fail(fixture, "\(route): the container's type is \(type.name), expected \(codec.info.type.name)")
        }
        return container
    }

    /// Compares a decoded image with the reference and the manifest's metadata.
    func verify(
        _ container: ImageContainer, _ fixture: Fixture, _ route: String,
        reference: Bitmap?, named referenceName: String?, tolerance: ImageComparison.Tolerance,
        _ result: inout ConformanceResult
    ) {
        let image = container.image
        if let (width, height) = expectedSize(fixture), image.width != width || image.height != height {
            result.fail(fixture, "\(route): size \(image.width)×\(image.height), expected \(width)×\(height)")
        }
        if let reference {
            let comparison = ImageComparison(image.bitmap, reference: reference, tolerance: tolerance)
            if !comparison.isMatch {
                result.fail(fixture, "\(route): pixels differ from \(referenceName ?? "the reference"): \(comparison)")
            }
        }
        if let orientation = fixture.orientation, Int(image.orientation.rawValue) != orientation {
            result.fail(fixture, "\(route): orientation \(image.orientation.rawValue) (\(image.orientation)), expected \(orientation)")
        }
        if fixture.iccSHA256 != nil || fixture.iccSize != nil {
            if let icc = image.iccProfile {
                if let size = fixture.iccSize, icc.count != size {
                    result.fail(fixture, "\(route): ICC profile of \(icc.count) bytes, expected \(size)")
                }
                if let hash = fixture.iccSHA256, FixtureDigest.sha256Hex(icc) != hash.lowercased() {
                    result.fail(fixture, "\(route): ICC profile SHA-256 \(FixtureDigest.sha256Hex(icc)), expected \(hash.lowercased())")
                }
            } else {
                result.fail(fixture, "\(route): no ICC profile, expected \(fixture.iccSize.map { "\($0) bytes" } ?? "one")")
            }
        }
        if let gamma = fixture.gamma {
            if let actual = image.colorInfo.gamma {
                if abs(actual - gamma) > 1e-4 { result.fail(fixture, "\(route): gamma \(actual), expected \(gamma)") }
            } else {
                result.fail(fixture, "\(route): no gamma, expected \(gamma)")
            }
        }
        if let intent = fixture.sRGBIntent, image.colorInfo.sRGBIntent != intent {
            result.fail(fixture, "\(route): sRGB intent \(image.colorInfo.sRGBIntent.map(String.init) ?? "none"), expected \(intent)")
        }
    }
}
