import Foundation
import NukeConformance
import NukeCore
import Testing
import NukeJPEG

/// Progressive decoding: previews per completed scan, final image equal to a one-shot decode.
///
/// A scan counts as complete when the next SOS marker (or the EOI) has arrived. Fed in chunks
/// that stop short of the last byte, a 10-scan file gives 9 previews; when the EOI arrives in
/// partial data, the 10th preview comes too.
@Suite("ImageDecoders.JPEG progressive")
struct ImageDecodersJPEGProgressiveTests {
    /// Feeds `data` in `chunks` growing prefixes (the last one complete when `includeComplete`),
    /// then decodes the whole; returns the previews and the final container.
    private func feed(
        _ data: Data, chunks: Int, includeComplete: Bool = false, context: ImageDecodingContext? = nil
    ) throws -> (previews: [ImageContainer], final: ImageContainer) {
        let decoder = ImageDecoders.JPEG(context: context ?? ImageDecodingContext(data: data, isCompleted: false))
        var previews: [ImageContainer] = []
        let last = includeComplete ? chunks : chunks - 1
        for i in stride(from: 1, through: last, by: 1) {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(data.count * i / chunks)) {
                previews.append(preview)
            }
        }
        return (previews, try decoder.decode(data))
    }

    @Test("final image after chunks equals the reference", arguments: JPEGConformance.manifest.valid)
    func finalEqualsReference(_ fixture: Fixture) throws {
        let data = try JPEGFixtures.data(fixture.file)
        let reference = try JPEGFixtures.reference(try #require(fixture.reference))
        for chunks in [2, 32, data.count] {
            let (previews, final) = try feed(data, chunks: chunks)
            #expect(final.image.bitmap == reference, "\(chunks) chunks")
            #expect(!final.isPreview)
            #expect(Int(final.image.orientation.rawValue) == (fixture.orientation ?? 1))
            #expect(previews.count <= max((fixture.scans ?? 1) - 1, 0))
            for preview in previews {
                #expect(preview.isPreview)
                #expect(preview.image.width == reference.width && preview.image.height == reference.height)
            }
        }
    }

    @Test func tenScansGiveNinePreviewsThenTheTenthAtEOI() throws {
        let data = try JPEGFixtures.data("progressive.jpg")
        let (previews, final) = try feed(data, chunks: data.count)  // one byte at a time
        #expect(previews.map { $0.userInfo[.scanNumberKey] as? Int } == (1...9).map { $0 })
        #expect(final.image.bitmap == (try JPEGFixtures.reference("progressive.pam")))

        let complete = try feed(data, chunks: data.count, includeComplete: true)
        #expect(complete.previews.map { $0.userInfo[.scanNumberKey] as? Int } == (1...10).map { $0 })
        #expect(complete.previews.last?.image.bitmap == complete.final.image.bitmap)
        #expect(complete.final.image.bitmap == final.image.bitmap)
    }

    @Test(.enabled(if: corporaExist))
    func nukeProgressiveIn32Chunks() throws {
        let data = try JPEGFixtures.corpus("\(JPEGFixtures.nuke)/progressive.jpeg")
        let oneShot = try ImageDecoders.JPEG().decode(data)
        let (previews, final) = try feed(data, chunks: 32, includeComplete: true)
        let scans = previews.compactMap { $0.userInfo[.scanNumberKey] as? Int }
        #expect(scans.last == 10)
        #expect(scans == scans.sorted() && Set(scans).count == scans.count, "one preview per newly completed scan")
        #expect(final.image.bitmap == oneShot.image.bitmap)
        #expect(previews.allSatisfy { $0.isPreview && $0.image.width == oneShot.image.width })
    }

    @Test(.enabled(if: corporaExist), arguments: [1, 7, 32, 1000])
    func nukeTrickyProgressive(_ chunks: Int) throws {
        let data = try JPEGFixtures.corpus("\(JPEGFixtures.nuke)/tricky_progressive.jpeg")
        let oneShot = try ImageDecoders.JPEG().decode(data)
        let (previews, final) = try feed(data, chunks: chunks)
        #expect(final.image.bitmap == oneShot.image.bitmap)
        let scans = previews.compactMap { $0.userInfo[.scanNumberKey] as? Int }
        #expect(scans == scans.sorted())
    }

    @Test func previewsConvergeOnTheFinalImage() throws {
        let data = try JPEGFixtures.data("progressive-160x120.jpg")
        let reference = try JPEGFixtures.reference("progressive-160x120.pam")
        let (previews, _) = try feed(data, chunks: data.count, includeComplete: true)
        let errors = previews.map { preview -> Int in
            let a = preview.image.bitmap.packedBytes, b = reference.packedBytes
            return zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        }
        #expect(errors.first! > errors.last!)
        #expect(errors.last == 0)
    }

    @Test("arithmetic-coded progressive files give a preview per scan", arguments: [1, 5, 32])
    func arithmeticPreviews(_ step: Int) throws {
        let data = try JPEGFixtures.data("progressive-arithmetic.jpg")
        let decoder = ImageDecoders.JPEG()
        var scans: [Int] = []
        for length in stride(from: step, through: data.count, by: step) {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(length)) {
                scans.append(preview.userInfo[.scanNumberKey] as? Int ?? 0)
            }
        }
        if step == 1 { #expect(scans == Array(1...10)) }
        #expect(scans == scans.sorted() && !scans.isEmpty)
        #expect(try decoder.decode(data).image.bitmap == (try JPEGFixtures.reference("progressive-arithmetic.pam")))
    }

    @Test func baselineGivesNoPreviewsButDecodesIncrementally() throws {
        let data = try JPEGFixtures.data("baseline-420-160x120.jpg")
        let (previews, final) = try feed(data, chunks: 32)
        #expect(previews.isEmpty)
        #expect(final.image.bitmap == (try JPEGFixtures.reference("baseline-420-160x120.pam")))
    }

    @Test func truncatedProgressiveGivesPreviewsThenIncomplete() throws {
        let data = try JPEGFixtures.data("truncated-progressive.jpg")  // 3 complete scans, no EOI
        let decoder = ImageDecoders.JPEG(context: ImageDecodingContext(data: data, isCompleted: false))
        var scans: [Int] = []
        for length in stride(from: 1, through: data.count, by: 50) {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(length)) {
                scans.append(preview.userInfo[.scanNumberKey] as? Int ?? 0)
            }
        }
        _ = decoder.decodePartiallyDownloadedData(data).map { scans.append($0.userInfo[.scanNumberKey] as? Int ?? 0) }
        #expect(scans.last == 2, "the third scan is not known to be complete before the 4th SOS")
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data) }
        #expect(error.code == .incomplete)
    }

    @Test func scanCapAppliesToPartialDecoding() throws {
        let data = try JPEGFixtures.data("progressive-many-scans.jpg")
        var limits = ImageLimits.default
        limits.maxScanCount = 5
        let context = ImageDecodingContext(data: data, isCompleted: false, limits: limits)
        let decoder = ImageDecoders.JPEG(context: context)
        var scans: [Int] = []
        for length in stride(from: 1, through: data.count, by: 16) {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(length)) {
                scans.append(preview.userInfo[.scanNumberKey] as? Int ?? 0)
            }
        }
        #expect(scans.allSatisfy { $0 <= 5 })
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("exceeds maximum scans (5)"))
    }

    @Test func scanBombInChunksIsRefused() throws {
        let data = try JPEGFixtures.data("progressive-scan-bomb.jpg")
        let decoder = ImageDecoders.JPEG(context: ImageDecodingContext(data: data, isCompleted: false))
        for i in 1..<32 {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(data.count * i / 32)) {
                #expect((preview.userInfo[.scanNumberKey] as? Int ?? 0) <= 100)
            }
        }
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data) }
        #expect(error.code == .limitExceeded)
    }

    @Test func decodeWithShorterDataStartsOver() throws {
        let data = try JPEGFixtures.data("progressive-160x120.jpg")
        let other = try JPEGFixtures.data("baseline-1x1.jpg")
        try #require(other.count < data.count / 2)
        let decoder = ImageDecoders.JPEG()
        _ = decoder.decodePartiallyDownloadedData(data.prefix(data.count / 2))
        let container = try decoder.decode(other)  // shorter than what was fed: a one-shot decode
        #expect(container.image.bitmap == (try JPEGFixtures.reference("baseline-1x1.pam")))
    }

    @Test func corruptPartialDataThenDecodeThrows() throws {
        let data = try JPEGFixtures.data("soi-garbage.jpg")
        let decoder = ImageDecoders.JPEG()
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(300)) == nil)
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data) }
        #expect(error.code == .corrupt)
    }

    @Test func scaledProgressivePreviews() throws {
        let data = try JPEGFixtures.data("progressive-160x120.jpg")
        let context = ImageDecodingContext(data: data, isCompleted: false, targetSize: ImageSize(width: 40, height: 30))
        let (previews, final) = try feed(data, chunks: 16, context: context)
        #expect(!previews.isEmpty)
        #expect(previews.allSatisfy { $0.image.width == 40 && $0.image.height == 30 })
        #expect(final.userInfo[.decodeScaleKey] as? Double == 0.25)
        let oneShot = try ImageDecoders.JPEG(context: ImageDecodingContext(data: data, targetSize: ImageSize(width: 40, height: 30))).decode(data)
        #expect(final.image.bitmap == oneShot.image.bitmap)
    }

    @Test func cancellationStopsPartialDecoding() throws {
        let data = try JPEGFixtures.data("progressive.jpg")
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let decoder = ImageDecoders.JPEG(context: ImageDecodingContext(data: data, isCompleted: false, cancellation: cancellation))
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(data.count - 1)) == nil)
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data) }
        #expect(error.code == .cancelled)
    }
}
