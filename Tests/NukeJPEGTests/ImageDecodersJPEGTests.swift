import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import Testing
import NukeJPEG

@Suite("ImageDecoders.JPEG")
struct ImageDecodersJPEGTests {
    private func decode(_ data: Data, context: ImageDecodingContext? = nil) throws -> ImageContainer {
        let context = context ?? ImageDecodingContext(data: data)
        return try ImageDecoders.JPEG(context: context).decode(data)
    }

    // MARK: - Fixtures against djpeg's reference decodes

    @Test("decodes like djpeg -pnm", arguments: JPEGConformance.manifest.valid)
    func fixtureMatchesReference(_ fixture: Fixture) throws {
        let container = try decode(JPEGFixtures.data(fixture.file))
        let reference = try JPEGFixtures.reference(try #require(fixture.reference))
        let bitmap = container.image.bitmap
        #expect(bitmap.width == reference.width && bitmap.height == reference.height)
        #expect(bitmap.pixelFormat == reference.pixelFormat)
        #expect(bitmap.maxDifference(to: reference) <= (fixture.tolerance ?? 0))
        #expect(container.type == .jpeg)
        #expect(!container.isPreview)
        #expect(container.userInfo[.isProgressiveKey] as? Bool == (fixture.isProgressive ?? false))
        #expect(Int(container.image.orientation.rawValue) == (fixture.orientation ?? 1))
    }

    @Test("invalid fixtures throw the expected error", arguments: JPEGConformance.manifest.invalid)
    func invalidFixture(_ fixture: Fixture) throws {
        let expected: ImageCodecError.Code = switch fixture.expectedError {
        case .incomplete: .incomplete
        case .limit: .limitExceeded
        default: .corrupt
        }
        let data = try JPEGFixtures.data(fixture.file)
        let error = try #require(throws: ImageCodecError.self) { try decode(data) }
        #expect(error.code == expected, "\(error)")
        #expect(error.format == .jpeg)
        #expect(!error.message.isEmpty)
    }

    @Test func corruptErrorKeepsLibjpegMessage() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(JPEGFixtures.data("soi-garbage.jpg")) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("Unsupported marker type 0x4e"))
        #expect(error.codec == "libjpeg-turbo 2.1.5")
    }

    @Test func truncatedBaselineIsIncomplete() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(JPEGFixtures.data("truncated-half.jpg")) }
        #expect(error.code == .incomplete)
        #expect(error.message == "Premature end of JPEG file")
    }

    @Test func everyPrefixThrowsIncompleteOrCorrupt() throws {
        let data = try JPEGFixtures.data("progressive-16x16.jpg")
        for length in stride(from: 0, to: data.count, by: 7) {
            let prefix = data.prefix(length)
            let error = try #require(throws: ImageCodecError.self) { try decode(prefix) }
            #expect(error.code == (length == 0 ? .corrupt : .incomplete), "prefix \(length): \(error)")
        }
    }

    // MARK: - Metadata

    @Test("EXIF orientation", arguments: 1...8)
    func exifOrientation(_ value: Int) throws {
        for order in ["le", "be"] {
            let container = try decode(JPEGFixtures.data("exif-orientation-\(value)-\(order).jpg"))
            #expect(container.image.orientation.rawValue == UInt8(value))
            let exif = try #require(container.image.exif)
            #expect(exif.starts(with: order == "le" ? [0x49, 0x49] : [0x4D, 0x4D]), "EXIF block starts at the TIFF header")
            #expect(container.image.bitmap == (try JPEGFixtures.reference("baseline-420.pam")))
        }
    }

    @Test("ICC profile", arguments: ["icc.jpg", "icc-multichunk.jpg", "icc-multichunk-reordered.jpg"])
    func iccProfile(_ file: String) throws {
        let fixture = try #require(JPEGConformance.manifest[file])
        let profile = try #require(try decode(JPEGFixtures.data(file)).image.colorInfo.iccProfile)
        #expect(profile.count == fixture.iccSize)
        #expect(profile.starts(with: [UInt8]([0, 0])) || profile.count > 128)
    }

    @Test func noMetadataWhenAbsent() throws {
        let image = try decode(JPEGFixtures.data("baseline-420.jpg")).image
        #expect(image.exif == nil)
        #expect(image.colorInfo.iccProfile == nil)
        #expect(image.orientation == .up)
    }

    // MARK: - Limits

    @Test func hugeDimensionsFailBeforeAllocating() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: ImageCodecError.self) { try decode(JPEGFixtures.data("huge-dimensions.jpg")) }
        #expect(error.code == .limitExceeded)
        #expect(error.stage == .header)
        #expect(clock.now - start < .seconds(1))
    }

    @Test func maxDecodedBytesCountsPixels() throws {
        let data = try JPEGFixtures.data("baseline-420-160x120.jpg")
        var limits = ImageLimits.default
        limits.maxDecodedBytes = 160 * 120 * 3 - 1
        let error = try #require(throws: ImageCodecError.self) { try decode(data, context: ImageDecodingContext(data: data, limits: limits)) }
        #expect(error.code == .limitExceeded)
        limits.maxDecodedBytes = 160 * 120 * 3
        #expect(try decode(data, context: ImageDecodingContext(data: data, limits: limits)).image.width == 160)
    }

    @Test func exactLimitsFitProgressiveFiles() throws {
        let data = try JPEGFixtures.data("progressive-160x120.jpg")
        let limits = ImageLimits(maxPixelCount: 160 * 120, maxDimension: 160, maxDecodedBytes: 160 * 120 * 3)
        #expect(try decode(data, context: ImageDecodingContext(data: data, limits: limits)).image.bitmap
            == (try JPEGFixtures.reference("progressive-160x120.pam")))
    }

    @Test func coefficientBufferIsBoundedForScaledDecodes() throws {
        // progressive-16x16.jpg with its SOF2 patched to 8192×8192, decoded at 1/8: the pixels
        // (1024×1024×3) fit, the full-size coefficient buffer (~200 MB) does not fit in
        // 4 × maxDecodedBytes + 1 MiB.
        var bytes = [UInt8](try JPEGFixtures.data("progressive-16x16.jpg"))
        let sof = try #require(bytes.indices.dropLast().first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC2 })
        bytes[sof + 5] = 0x20; bytes[sof + 6] = 0x00   // height 8192
        bytes[sof + 7] = 0x20; bytes[sof + 8] = 0x00   // width 8192
        let data = Data(bytes)
        let limits = ImageLimits(maxDecodedBytes: 1024 * 1024 * 3)
        // Fast scaling: DCT scaling straight to 1/8 (the default plan would decode at 1/4, whose
        // pixels alone are over the limit).
        var context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 1024, height: 1024), limits: limits)
        context.prefersFastScaling = true
        let error = try #require(throws: ImageCodecError.self) { try decode(data, context: context) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("DCT coefficients"), "\(error)")
    }

    @Test func maxDimensionAndPixelCount() throws {
        let data = try JPEGFixtures.data("baseline-422.jpg")  // 61×45
        var limits = ImageLimits.default
        limits.maxDimension = 60
        #expect(throws: ImageCodecError.self) { try decode(data, context: ImageDecodingContext(data: data, limits: limits)) }
        limits = .default
        limits.maxPixelCount = 61 * 45 - 1
        #expect(throws: ImageCodecError.self) { try decode(data, context: ImageDecodingContext(data: data, limits: limits)) }
    }

    @Test func scanBombIsRefusedByDefault() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(JPEGFixtures.data("progressive-scan-bomb.jpg")) }
        #expect(error.code == .limitExceeded)
        #expect(error.message == "Scan number 101 exceeds maximum scans (100)")
    }

    @Test func scanCap() throws {
        let data = try JPEGFixtures.data("progressive-many-scans.jpg")  // 43 scans
        var limits = ImageLimits.default
        limits.maxScanCount = 42
        let error = try #require(throws: ImageCodecError.self) { try decode(data, context: ImageDecodingContext(data: data, limits: limits)) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("Scan number 43 exceeds maximum scans (42)"))
        limits.maxScanCount = 43
        #expect(try decode(data, context: ImageDecodingContext(data: data, limits: limits)).image.bitmap
            == (try JPEGFixtures.reference("progressive-many-scans.pam")))
    }

    @Test func scanBombDecodesWithoutCap() throws {
        let data = try JPEGFixtures.data("progressive-scan-bomb.jpg")
        let container = try decode(data, context: ImageDecodingContext(data: data, limits: .unlimited))
        #expect(container.image.bitmap == (try JPEGFixtures.reference("progressive-16x16.pam")))
    }

    // MARK: - Scaled decoding

    /// The core's plan: DCT scaling to the smallest N/8 that covers twice the exact size (Pillow's
    /// reducing gap), or the exact size itself with `prefersFastScaling`; then the resampler.
    @Test("scaled decode picks the smallest N/8 that covers the plan's floor, then resamples the remainder", arguments: [
        (160, 120, nil, nil), (80, 60, 8, 4), (79, 59, 8, 4), (81, 60, 8, 5), (20, 15, 2, 1), (21, 15, 3, 2), (1, 1, 1, 1),
        (400, 300, nil, nil),
    ])
    func scaledDecode(_ width: Int, _ height: Int, _ expected: Int?, _ expectedFast: Int?) throws {
        let data = try JPEGFixtures.data("baseline-420-160x120.jpg")
        for fast in [false, true] {
            var context = ImageDecodingContext(data: data, targetSize: ImageSize(width: width, height: height))
            context.prefersFastScaling = fast
            let container = try decode(data, context: context)
            let scale = fast ? expectedFast : expected
            // A reduction is reported; 8/8 is none.
            #expect(container.userInfo[.dctScaleKey] as? Double == scale.flatMap { $0 < 8 ? Double($0) / 8 : nil }, "fast: \(fast)")
            // The exact size the target asks for (aspect fill, never upscaled).
            let exact = ImageSize(width: 160, height: 120).fitted(to: ImageSize(width: width, height: height), contentMode: .aspectFill)
            #expect(container.image.width == exact.width && container.image.height == exact.height)
            if scale == nil {
                #expect(container.userInfo[.originalSizeKey] == nil, "no reduction, nothing to report")
            } else {
                #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 160, height: 120))
                #expect(container.userInfo[.decodeScaleKey] as? Double == Double(exact.width) / 160)
            }
        }
    }

    @Test func aspectFitScalesToTheLargerSide() throws {
        let data = try JPEGFixtures.data("baseline-420-160x120.jpg")
        let context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 40, height: 100), contentMode: .aspectFit)
        let container = try decode(data, context: context)
        #expect(container.userInfo[.decodeScaleKey] as? Double == 2.0 / 8)  // 40 × 30 fits
        #expect(container.userInfo[.dctScaleKey] as? Double == 4.0 / 8)    // 80 × 60 covers twice that
    }

    /// libjpeg-turbo's own test suite: MD5 of `djpeg -dct int -scale N/8 -nosmooth -ppm testorig.jpg`
    /// (at these scales the chroma is IDCT-scaled to full size, so fancy upsampling is not used
    /// and `-nosmooth` changes nothing).
    @Test("scaled decode equals libjpeg-turbo's test MD5s", .enabled(if: corporaExist), arguments: [
        (1, "391b3d4aca640c8567d6f8745eb2142f"), (2, "79cd778f8bf1a117690052cacdd54eca"),
        (3, "79eca9175652ced755155c90e785a996"), (4, "e692a315cea26b988c8e8b29a5dbcd81"),
        (5, "a3363274999da2366a024efae6d16c9b"), (6, "8ed8e68808c3fbc4ea764fc9d2968646"),
        (7, "ddb564b7c74a09494016d6cd7502a946"),
    ])
    func scaledTestorigMD5(_ scale: Int, _ md5: String) throws {
        let data = try JPEGFixtures.corpus("\(JPEGFixtures.turbo)/testorig.jpg")
        let full = try decode(data).image
        let target = ImageSize(width: (full.width * scale + 7) / 8, height: (full.height * scale + 7) / 8)
        // Fast scaling: DCT scaling straight to the size asked for, libjpeg's pixels exactly.
        var context = ImageDecodingContext(data: data, targetSize: target)
        context.prefersFastScaling = true
        let container = try decode(data, context: context)
        #expect(container.userInfo[.dctScaleKey] as? Double == Double(scale) / 8)
        #expect(MD5.hex([UInt8](Netpbm.pnm(container.image.bitmap))) == md5)
    }

    // MARK: - Corpora

    @Test(.enabled(if: corporaExist))
    func arithmeticEqualsHuffman() throws {
        let ari = try decode(JPEGFixtures.corpus("\(JPEGFixtures.turbo)/testimgari.jpg")).image.bitmap
        let huff = try decode(JPEGFixtures.corpus("\(JPEGFixtures.turbo)/testimgint.jpg")).image.bitmap
        #expect(ari.width == 227 && ari.height == 149)
        #expect(ari == huff)
    }

    @Test(.enabled(if: corporaExist))
    func twelveBitIsUnsupported() throws {
        let data = try JPEGFixtures.corpus("\(JPEGFixtures.turbo)/monkey12.jpg")
        let error = try #require(throws: ImageCodecError.self) { try decode(data) }
        #expect(error.code == .unsupported)
        #expect(error.message.contains("precision 12"))
    }

    @Test("Pillow's oriented hoppers", .enabled(if: corporaExist), arguments: 2...8)
    func pillowOrientation(_ value: Int) throws {
        let container = try decode(JPEGFixtures.corpus("\(JPEGFixtures.pillow)/hopper_orientation_\(value).jpg"))
        #expect(container.image.orientation.rawValue == UInt8(value))
    }

    @Test(.enabled(if: corporaExist))
    func nukeRightOrientation() throws {
        let container = try decode(JPEGFixtures.corpus("\(JPEGFixtures.nuke)/right-orientation.jpeg"))
        #expect(container.image.orientation == .right)
    }

    @Test(.enabled(if: corporaExist))
    func displayP3Profile() throws {
        let image = try decode(JPEGFixtures.corpus("\(JPEGFixtures.nuke)/image-p3.jpg")).image
        let profile = try #require(image.colorInfo.iccProfile)
        #expect(profile.count == 548)
        #expect(String(decoding: profile[36..<40], as: UTF8.self) == "acsp")
    }

    @Test(.enabled(if: corporaExist))
    func pillowCMYK() throws {
        let image = try decode(JPEGFixtures.corpus("\(JPEGFixtures.pillow)/pil_sample_cmyk.jpg")).image
        #expect(image.bitmap.pixelFormat == .rgb8)
        #expect(image.width == 100 && image.height == 100)
    }

    @Test(.enabled(if: corporaExist))
    func nukeGrayscale() throws {
        let image = try decode(JPEGFixtures.corpus("\(JPEGFixtures.nuke)/grayscale.jpeg")).image
        #expect(image.bitmap.pixelFormat == .gray8)
    }

    // MARK: - Registration and concurrency

    @Test func sniffing() throws {
        let data = try JPEGFixtures.data("baseline-420.jpg")
        #expect(ImageDecoders.JPEG(data: data, context: ImageDecodingContext(data: data)) != nil)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(ImageDecoders.JPEG(data: png, context: ImageDecodingContext(data: png)) == nil)
    }

    @Test func emptyInputIsCorrupt() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(Data()) }
        #expect(error.code == .corrupt)
    }

    @Test func cancelledBeforeStart() throws {
        let data = try JPEGFixtures.data("baseline-420.jpg")
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let error = try #require(throws: ImageCodecError.self) {
            try decode(data, context: ImageDecodingContext(data: data, cancellation: cancellation))
        }
        #expect(error.code == .cancelled)
    }

    @Test func concurrentDecodes() async throws {
        let files = JPEGConformance.manifest.valid.prefix(16)
        let inputs = try files.map { (try JPEGFixtures.data($0.file), try JPEGFixtures.reference($0.reference ?? "")) }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                for (data, reference) in inputs {
                    group.addTask {
                        try ImageDecoders.JPEG().decode(data).image.bitmap == reference
                    }
                }
            }
            for try await equal in group { #expect(equal) }
        }
    }

    @Test func oneDecoderSharedAcrossTasks() async throws {
        let data = try JPEGFixtures.data("progressive.jpg")
        let reference = try JPEGFixtures.reference("progressive.pam")
        let decoder = ImageDecoders.JPEG()
        try await withThrowingTaskGroup(of: Bitmap.self) { group in
            for _ in 0..<8 { group.addTask { try decoder.decode(data).image.bitmap } }
            for try await bitmap in group { #expect(bitmap == reference) }
        }
    }
}
