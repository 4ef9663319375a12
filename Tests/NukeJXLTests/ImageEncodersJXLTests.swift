import Foundation
import NukeConformance
import NukeCore
import NukeJXL
import NukePixels
import Testing

@Suite struct ImageEncodersJXLTests {
    @Test(arguments: [PixelFormat.rgba8, .rgb8, .gray8])
    func losslessRoundTripIsExact(_ format: PixelFormat) throws {
        let source = try decodeJXL(try JXLTestPaths.fixture("alpha.jxl")).image.bitmap.converted(to: format)
        let data = try ImageEncoders.JXL(options: ImageEncodingOptions(isLossless: true, compressionLevel: 3)).encode(Image(bitmap: source))
        #expect(ImageType(data) == .jxl)
        let decoded = try decodeJXL(data).image.bitmap
        #expect(decoded.pixelFormat == format)
        #expect(decoded.packedBytes == source.packedBytes)
    }

    @Test func sixteenBitsAreKept() throws {
        let source = try JXLTestPaths.reference("sixteen.16.ppm")
        #expect(source.pixelFormat == .rgb16)
        let data = try ImageEncoders.JXL(options: ImageEncodingOptions(isLossless: true, prefersHighBitDepth: true)).encode(Image(bitmap: source))
        let decoded = try decodeJXL(data) { $0.prefersHighBitDepth = true }
        #expect(decoded.image.bitmap.packedBytes == source.packedBytes)
        #expect(decoded.userInfo[.jxlBitDepthKey] as? Int == 16)
    }

    @Test func lossyFollowsTheQuality() throws {
        let source = try JXLTestPaths.reference("progressive.ppm")
        let low = try ImageEncoders.JXL(options: ImageEncodingOptions(quality: 0.3)).encode(Image(bitmap: source))
        let high = try ImageEncoders.JXL(options: ImageEncodingOptions(quality: 0.95)).encode(Image(bitmap: source))
        #expect(low.count < high.count)
        let decoded = try decodeJXL(high).image.bitmap
        let comparison = ImageComparison(decoded, reference: source, tolerance: .maxDifference(255))
        #expect(comparison.psnr > 35, "\(comparison)")
    }

    @Test func qualityMapsToDistanceAsCjxl() {
        #expect(ImageEncoders.JXL.distance(forQuality: 100) == 0)
        #expect(abs(ImageEncoders.JXL.distance(forQuality: 90) - 1.0) < 1e-9)
        #expect(abs(ImageEncoders.JXL.distance(forQuality: 30) - 6.4) < 1e-9)
        #expect(ImageEncoders.JXL.distance(forQuality: 0) > 15)
    }

    /// An animation comes back with its frames, durations and loop count (lossless: the same pixels).
    @Test func animationRoundTrip() throws {
        let decoded = try decodeJXL(try JXLTestPaths.fixture("anim.jxl"))
        let animation = try #require(decoded.animation)
        let data = try ImageEncoders.JXL(options: ImageEncodingOptions(isLossless: true)).encode(animation)
        let again = try #require(try decodeJXL(data).animation)
        #expect(again.frameCount == 3)
        #expect(again.frameInfos.map(\.duration) == [0.1, 0.2, 0.3])
        #expect(again.loopCount == 0)
        let frames = try again.allFrames(limits: .default)
        for (index, frame) in frames.enumerated() {
            let comparison = ImageComparison(frame.bitmap, reference: try JXLTestPaths.reference("anim.\(index).pam"))
            #expect(comparison.isMatch, "frame \(index): \(comparison)")
        }
    }

    @Test func theOrientationIsWrittenInTheHeader() throws {
        var image = try decodeJXL(try JXLTestPaths.fixture("lossless.jxl")).image
        image.orientation = .left
        let decoded = try decodeJXL(try ImageEncoders.JXL(options: ImageEncodingOptions(isLossless: true)).encode(image)).image
        #expect(decoded.orientation == .left)
        #expect(decoded.bitmap.packedBytes == image.bitmap.packedBytes)
    }

    @Test func anExplicitDistanceWins() throws {
        let source = try JXLTestPaths.reference("progressive.ppm")
        let near = try ImageEncoders.JXL(distance: 0.5).encode(Image(bitmap: source))
        let far = try ImageEncoders.JXL(distance: 8).encode(Image(bitmap: source))
        #expect(far.count < near.count)
    }
}

@Suite struct JXLTranscoderTests {
    /// A JPEG recompressed by NukeJXL comes back bit for bit. (This 1.2 KB JPEG does not shrink:
    /// the container and the reconstruction data cost more than the entropy coding saves.)
    @Test func recompressionRoundTripIsBitExact() throws {
        let jpeg = try JXLTestPaths.fixture("recompressed.source.jpg")
        let jxl = try JXLTranscoder.recompress(jpeg: jpeg)
        #expect(jxl.starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]))
        #expect(try JXLTranscoder.reconstructJPEG(from: jxl) == jpeg)
        // The recompressed file also decodes to pixels, with the JPEG's orientation.
        let decoded = try decodeJXL(jxl)
        #expect(decoded.image.orientation == .right)
        #expect(ImageComparison(decoded.image.bitmap, reference: try JXLTestPaths.reference("recompressed.ppm"), tolerance: .maxDifference(1)).isMatch)
    }

    /// cjxl's recompression reconstructs to the same JPEG too.
    @Test func cjxlRecompressionReconstructs() throws {
        let jpeg = try JXLTestPaths.fixture("recompressed.source.jpg")
        #expect(try JXLTranscoder.reconstructJPEG(from: try JXLTestPaths.fixture("recompressed.jxl")) == jpeg)
    }

    @Test func aFileNotMadeFromAJPEGIsUnsupported() throws {
        let error = try #require(throws: ImageCodecError.self) { try JXLTranscoder.reconstructJPEG(from: try JXLTestPaths.fixture("lossless.jxl")) }
        #expect(error.code == .unsupported)
    }

    @Test func notAJPEGIsRefused() throws {
        let error = try #require(throws: ImageCodecError.self) { try JXLTranscoder.recompress(jpeg: Data("not a jpeg".utf8)) }
        #expect(error.code == .encodingFailed)
    }
}
