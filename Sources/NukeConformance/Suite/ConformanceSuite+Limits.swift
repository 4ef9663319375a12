import Foundation
import NukeCore

extension ConformanceSuite {
    /// Checks that a decoder honours `ImageLimits`, with limits derived from the image.
    ///
    /// With `maxPixelCount = w × h` and `maxDimension = max(w, h)` — an exact fit — the
    /// decode succeeds. With either one smaller, or `maxDecodedBytes` one byte below the
    /// decoded pixels' size, it throws `.limitExceeded`, through the codec's decoder and a
    /// registry, and a partial decode returns no preview. (`maxDecodedBytes` is not required
    /// to fit exactly: a codec may count its own buffers too, such as a progressive JPEG's
    /// coefficients.)
    public func checkLimits(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.limits, fixture)
        guard fixture.kind == .valid, codec.makeDecoder != nil else {
            if fixture.kind != .valid { result.skipped.append("\(fixture.file): not a valid fixture") }
            return result
        }
        guard let data = load(fixture, into: &result),
              let container = expectImage(decodeOnce(data), fixture, "decode with the suite's limits", &result) else { return result }
        let image = container.image
        let width = image.width, height = image.height
        let decodedBytes = image.frames.reduce(0) { $0 + $1.bitmap.width * $1.bitmap.height * $1.bitmap.pixelFormat.bytesPerPixel }
        var exact = options.limits
        exact.maxPixelCount = width * height
        exact.maxDimension = max(width, height)
        // An animation decoded lazily has one eager frame; its frame count is the animation's.
        exact.maxFrameCount = container.animation?.frameCount ?? image.frames.count

        result.caseCount += 1
        switch decodeOnce(data, limits: exact) {
        case .image: break
        case let outcome: result.fail(fixture, "limits that fit exactly (\(describe(exact))): expected an image, got \(outcome)")
        }

        var tight: [(String, ImageLimits)] = []
        var limits = exact
        limits.maxPixelCount = width * height - 1
        tight.append(("maxPixelCount \(limits.maxPixelCount)", limits))
        limits = exact
        limits.maxDimension = max(width, height) - 1
        tight.append(("maxDimension \(limits.maxDimension)", limits))
        if options.checksDecodedBytesLimit {
            limits = exact
            limits.maxDecodedBytes = decodedBytes - 1
            tight.append(("maxDecodedBytes \(limits.maxDecodedBytes)", limits))
        }
        for (label, limits) in tight {
            for (route, outcome) in [("decoder", decodeOnce(data, limits: limits)), ("registry", decodeThroughRegistry(data, limits: limits))] {
                result.caseCount += 1
                switch outcome {
                case .error(let error) where error.code == .limitExceeded: break
                default: result.fail(fixture, "\(route) with \(label) for a \(width)×\(height) image: expected limitExceeded, got \(outcome)")
                }
            }
            // The progressive path must honour the limits too: no preview, then the error.
            result.caseCount += 1
            if let decoder = makeDecoder(context(data, isCompleted: false, limits: limits)) {
                if let preview = decoder.decodePartiallyDownloadedData(data) {
                    result.fail(fixture, "progressive with \(label): returned a \(preview.image.width)×\(preview.image.height) preview")
                }
                switch outcome({ try decoder.decode(data) }) {
                case .error(let error) where error.code == .limitExceeded: break
                case let other: result.fail(fixture, "progressive with \(label): the final decode gave \(other), expected limitExceeded")
                }
            }
        }
        return result
    }

    private func describe(_ limits: ImageLimits) -> String {
        "maxPixelCount \(limits.maxPixelCount), maxDimension \(limits.maxDimension), maxDecodedBytes \(limits.maxDecodedBytes)"
    }
}
