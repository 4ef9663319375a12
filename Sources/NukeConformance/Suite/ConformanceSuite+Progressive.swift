import Foundation
import NukeCore

extension ConformanceSuite {
    /// Feeds a fixture to one decoder instance per run, in the ways
    /// ``Options/progressiveFeedings`` lists, as a download would.
    ///
    /// Each run calls `ImageDecoding.decodePartiallyDownloadedData(_:)` with ever longer
    /// prefixes (the last being all of the data) — with ``Options/drainsPreviews``, again
    /// with the same prefix until it returns `nil` — creating the decoder with
    /// `isCompleted == false` on the first call the codec accepts, then
    /// `ImageDecoding.decode(_:)` with all of the data on the same instance. Modelled on
    /// swift-nio's `ByteToMessageDecoderVerifier`. Checks that:
    ///
    /// - previews have `ImageContainer.isPreview` set and the final image's size;
    /// - `ImageContainer.UserInfoKey.scanNumberKey` and `ImageContainer.UserInfoKey.rowCountKey`
    ///   never decrease within a run;
    /// - the final result equals a one-shot decode on a fresh instance exactly — the same
    ///   image, or for an invalid fixture the same error code;
    /// - a codec with `ImageCodecCapabilities.progressive` creates a decoder for partial data.
    ///
    /// Each run's preview count and scan numbers are in ``ConformanceResult/progressiveRuns``.
    public func checkProgressive(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.progressive, fixture)
        guard codec.makeDecoder != nil, let data = load(fixture, into: &result) else { return result }
        let oneShot = decodeOnce(data)
        if fixture.kind == .valid, oneShot.container == nil {
            result.fail(fixture, "the one-shot decode failed: \(oneShot)")
            return result
        }
        for feeding in options.resolvedFeedings {
            if feeding == .byteByByte, data.count > options.byteByByteLimit {
                result.skipped.append("\(fixture.file): byte-by-byte feeding of \(data.count) bytes (cap \(options.byteByByteLimit))")
                continue
            }
            result.caseCount += 1
            let run = feed(data, fixture: fixture, feeding: feeding, oneShot: oneShot, into: &result)
            result.progressiveRuns.append(run)
        }
        return result
    }

    /// Runs one progressive feeding and records what is wrong with it.
    func feed(_ data: Data, fixture: Fixture, feeding: ProgressiveFeeding, oneShot: DecodeOutcome, into result: inout ConformanceResult) -> ProgressiveRun {
        var run = ProgressiveRun(fixture: fixture.file, feeding: feeding, partialCallCount: 0, previewCount: 0,
                                 scanNumbers: [], rowCounts: [], previewOffsets: [], didDecode: false)
        let expected = oneShot.container?.image
        var decoder: (any ImageDecoding)?
        var problems = 0
        func fail(_ message: String) {
            problems += 1
            if problems <= 5 { result.fail(fixture, "fed \(feeding): \(message)") }
        }
        func inspect(_ preview: ImageContainer, at length: Int) {
            run.previewCount += 1
            run.previewOffsets.append(length)
            if !preview.isPreview {
                fail("the preview at \(length) bytes has isPreview == false")
            }
            if let expected, preview.image.width != expected.width || preview.image.height != expected.height {
                fail("the preview at \(length) bytes is \(preview.image.width)×\(preview.image.height), the image \(expected.width)×\(expected.height)")
            }
            if let scan = preview.userInfo[.scanNumberKey] {
                if let scan = scan as? Int {
                    if let last = run.scanNumbers.last, scan < last {
                        fail("the scan number went from \(last) to \(scan) at \(length) bytes")
                    }
                    run.scanNumbers.append(scan)
                } else {
                    fail("scanNumberKey holds \(type(of: scan)), expected Int")
                }
            }
            if let rows = preview.userInfo[.rowCountKey] {
                if let rows = rows as? Int {
                    if let last = run.rowCounts.last, rows < last {
                        fail("the row count went from \(last) to \(rows) at \(length) bytes")
                    }
                    if let expected, rows > expected.height || rows < 0 {
                        fail("the row count \(rows) at \(length) bytes is outside 0...\(expected.height)")
                    }
                    run.rowCounts.append(rows)
                } else {
                    fail("rowCountKey holds \(type(of: rows)), expected Int")
                }
            }
        }
        for length in feeding.prefixLengths(count: data.count) {
            let prefix = data.prefix(length)
            if decoder == nil {
                decoder = makeDecoder(context(prefix, isCompleted: false))
            }
            guard let decoder else { continue }
            let limit = options.drainsPreviews ? max(1, options.maximumPreviewsPerChunk) : 1
            var previewsForChunk = 0
            while previewsForChunk < limit {
                run.partialCallCount += 1
                guard let preview = decoder.decodePartiallyDownloadedData(prefix) else { break }
                previewsForChunk += 1
                inspect(preview, at: length)
            }
            if options.drainsPreviews, previewsForChunk == limit {
                fail("the decoder kept returning previews for the same \(length) bytes (\(limit) of them)")
            }
        }
        if decoder == nil, fixture.kind == .valid, options.requiresProgressiveDecoder, codec.info.capabilities.contains(.progressive) {
            fail("the codec declares .progressive but made no decoder for partial data")
        }
        let final: DecodeOutcome
        if let decoder {
            final = outcome { try decoder.decode(data) }
        } else {
            final = decodeOnce(data)
        }
        run.didDecode = final.container != nil
        switch (oneShot, final) {
        case let (.image(a), .image(b)):
            if b.isPreview { fail("the final decode returned a preview") }
            if a.image != b.image {
                fail("the final image differs from a one-shot decode: \(describeDifference(b.image, a.image))")
            }
        case let (.error(a), .error(b)) where a.code == b.code:
            break
        case (.declined, .error), (.error, .declined), (.declined, .declined):
            // A decoder made early for a prefix may reject data that turns out not to be its
            // format, where a one-shot decode declines it: both refuse it.
            if ImageType(data) == codec.info.type, oneShot != final {
                fail("the final decode gave \(final), a one-shot decode \(oneShot)")
            }
        default:
            if oneShot != final {
                fail("the final decode gave \(final), a one-shot decode \(oneShot)")
            }
        }
        if problems > 5 { result.fail(fixture, "fed \(feeding): \(problems - 5) more problems not listed") }
        return run
    }

    /// Says how two images differ, for a failure message.
    func describeDifference(_ actual: Image, _ expected: Image) -> String {
        var parts: [String] = []
        if actual.frames.count != expected.frames.count { parts.append("\(actual.frames.count) frames vs \(expected.frames.count)") }
        if actual.bitmap != expected.bitmap {
            parts.append("pixels: \(ImageComparison(actual.bitmap, reference: expected.bitmap))")
            if actual.bitmap.alphaMode != expected.bitmap.alphaMode { parts.append("alpha \(actual.bitmap.alphaMode) vs \(expected.bitmap.alphaMode)") }
        }
        if actual.orientation != expected.orientation { parts.append("orientation \(actual.orientation) vs \(expected.orientation)") }
        if actual.colorInfo != expected.colorInfo { parts.append("colour info \(actual.colorInfo) vs \(expected.colorInfo)") }
        if actual.exif != expected.exif { parts.append("EXIF \(actual.exif?.count ?? 0) bytes vs \(expected.exif?.count ?? 0)") }
        if actual.loopCount != expected.loopCount { parts.append("loop count \(actual.loopCount) vs \(expected.loopCount)") }
        return parts.isEmpty ? "frame durations differ" : parts.joined(separator: "; ")
    }
}
