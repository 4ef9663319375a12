import Foundation
import NukeConformance
import NukeCore
import NukePixels
import NukeHEIF
import Testing

@Suite struct ImageDecodersHEIFTests {
    func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = ImageDecodingContext(data: data)
        configure(&context)
        return try ImageDecoderRegistry.shared.decode(context)
    }

    @Test func describesTheFile() throws {
        let container = try decode(try HEIFTestPaths.fixture("photo.heic"))
        #expect(container.type == .heic)
        #expect(container.userInfo[.heifBrandKey] as? String == "heic")
        #expect(container.userInfo[.heifBitDepthKey] as? Int == 8)
        #expect(container.userInfo[.heifImageCountKey] as? Int == 1)
        #expect(container.userInfo[.heifThumbnailCountKey] as? Int == 0)
        #expect(container.image.orientation == .up)
        let avif = try decode(try HEIFTestPaths.fixture("photo.avif"))
        #expect(avif.type == .avif)
        #expect(avif.userInfo[.heifBrandKey] as? String == "avif")
    }

    /// 10-bit samples come back as 16-bit when asked for, scaled to the full range; otherwise
    /// libheif converts them to 8 bits.
    @Test func tenBitAsSixteenOnRequest() throws {
        let data = try HEIFTestPaths.fixture("ten-bit.heic")
        let narrow = try decode(data).image.bitmap
        let wide = try decode(data) { $0.prefersHighBitDepth = true }
        #expect(wide.userInfo[.heifBitDepthKey] as? Int == 10)
        #expect(narrow.pixelFormat == .rgb8)
        #expect(wide.image.bitmap.pixelFormat == .rgb16)
        let comparison = ImageComparison(wide.image.bitmap.converted(to: .rgb8), reference: narrow, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
        let samples = wide.image.bitmap.converted(to: .rgb16).packedBytes
        // Full range: some sample uses the low bits a 10-bit value shifted left by 6 would leave at zero.
        let values = stride(from: 0, to: samples.count, by: 2).map { UInt16(samples[$0]) | UInt16(samples[$0 + 1]) << 8 }
        #expect(values.contains { $0 & 0x3F != 0 })
    }

    /// Decode to size takes the embedded thumbnail (48 × 36) when it covers the core plan's
    /// native floor: twice the final size, or the final size itself with fast scaling.
    @Test func decodeToSizeUsesTheThumbnail() throws {
        let data = try HEIFTestPaths.fixture("thumbnail.heic")
        let small = try decode(data) {
            $0.targetSize = ImageSize(width: 24, height: 24)
            $0.contentMode = .aspectFit
        }
        #expect(small.userInfo[.heifUsedThumbnailKey] as? Bool == true)
        #expect(small.image.width == 24 && small.image.height == 18)
        #expect(small.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 160, height: 120))
        let full = try decode(data).image.bitmap
        let comparison = ImageComparison(small.image.bitmap, reference: full.resized(to: ImageSize(width: 24, height: 18)), tolerance: .minimumPSNR(25))
        #expect(comparison.isMatch, "\(comparison)")
        // 32 × 24: the thumbnail is not twice that, so the image is decoded, unless fast scaling.
        for fast in [false, true] {
            let medium = try decode(data) {
                $0.targetSize = ImageSize(width: 32, height: 32)
                $0.contentMode = .aspectFit
                $0.prefersFastScaling = fast
            }
            #expect((medium.userInfo[.heifUsedThumbnailKey] as? Bool ?? false) == fast)
            #expect(medium.image.width == 32 && medium.image.height == 24)
        }

        let large = try decode(data) {
            $0.targetSize = ImageSize(width: 100, height: 100)
            $0.contentMode = .aspectFit
        }
        #expect(large.userInfo[.heifUsedThumbnailKey] == nil)
        #expect(large.image.width == 100 && large.image.height == 75)
        #expect(large.image.bitmap == full.resized(to: ImageSize(width: 100, height: 75)))
    }

    /// Decode to size hands libheif's rows to the resampler without a full-size copy (8-bit
    /// images without alpha from libheif's planar RGB, one plane at a time; the others from its
    /// interleaved rows): the result equals the full decode resized, for 8- and 16-bit samples,
    /// with and without alpha.
    @Test(arguments: ["photo.heic", "photo.avif", "alpha.heic", "alpha.avif", "ten-bit.heic", "lossless.heic"], [false, true])
    func decodeToSizeEqualsTheFullDecodeResized(_ name: String, highBitDepth: Bool) throws {
        let data = try HEIFTestPaths.fixture(name)
        let full = try decode(data) { $0.prefersHighBitDepth = highBitDepth }.image.bitmap
        let target = ImageSize(width: full.width / 3, height: full.height / 3)
        let small = try decode(data) {
            $0.prefersHighBitDepth = highBitDepth
            $0.targetSize = target
            $0.contentMode = .aspectFit
        }
        let expected = full.resized(toFit: target)
        #expect(small.image.bitmap == expected)
        #expect(small.image.bitmap.pixelFormat == full.pixelFormat)
        #expect(small.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: full.width, height: full.height))
    }

    @Test func limitsBeforeDecoding() throws {
        let data = try HEIFTestPaths.fixture("photo.heic")
        let error = try #require(throws: ImageCodecError.self) { try decode(data) { $0.limits = ImageLimits(maxPixelCount: 1000) } }
        #expect(error.code == .limitExceeded)
        #expect(error.format == .heic)
        let libheif = try #require(throws: ImageCodecError.self) { try decode(data) { $0.limits = ImageLimits(maxDimension: 8) } }
        #expect(libheif.code == .limitExceeded)
    }

    @Test func errorsKeepLibheifsMessage() throws {
        let truncated = try #require(throws: ImageCodecError.self) { try decode(try HEIFTestPaths.fixture("truncated.heic")) }
        #expect(truncated.code == .incomplete || truncated.code == .corrupt)
        #expect(truncated.codec?.hasPrefix("libheif 1.") == true)
        #expect(truncated.message.contains("heif_error"), "\(truncated)")
        let junk = try #require(throws: ImageCodecError.self) { try decode(try HEIFTestPaths.fixture("junk.heic")) }
        #expect(junk.code == .corrupt)
    }

    @Test func noProgressiveDecoding() throws {
        #expect(!ImageCodec.heic.info.capabilities.contains(.progressive))
        let data = try HEIFTestPaths.fixture("photo.heic")
        let decoder = try #require(ImageDecoders.HEIF(data: data, context: ImageDecodingContext(data: data)))
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(data.count / 2)) == nil)
    }
}

@Suite struct ImageEncodersHEIFTests {
    @Test(arguments: [ImageType.heic, .avif])
    func roundTrip(_ format: ImageType) throws {
        let source = try ImageDecoderRegistry.shared.decode(try HEIFTestPaths.fixture("alpha.heic")).image
        let encoded = try ImageEncoders.HEIF(format: format, options: ImageEncodingOptions(quality: 0.9)).encode(source)
        #expect(ImageType(encoded) == format)
        let decoded = try ImageDecoderRegistry.shared.decode(encoded).image
        #expect(decoded.bitmap.pixelFormat == .rgba8)
        let comparison = ImageComparison(decoded.bitmap, reference: source.bitmap, tolerance: .minimumPSNR(30))
        #expect(comparison.isMatch, "\(comparison)")
    }

    @Test func qualityAndICC() throws {
        var image = try ImageDecoderRegistry.shared.decode(try HEIFTestPaths.fixture("photo.heic")).image
        // A profile header (RGB display class, `acsp`) and an empty tag table, then filler:
        // encoders write only a profile whose colour space is the pixels'.
        var header = [UInt8](repeating: 0, count: 200)
        header[3] = 200
        header.replaceSubrange(12..<20, with: Array("mntrRGB ".utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        for index in 132..<200 { header[index] = UInt8(index) }
        let icc = Data(header)
        image.colorInfo.iccProfile = icc
        let low = try ImageEncoders.HEIF(options: ImageEncodingOptions(quality: 0.1)).encode(image)
        let high = try ImageEncoders.HEIF(options: ImageEncodingOptions(quality: 0.95)).encode(image)
        #expect(low.count < high.count)
        #expect(try ImageDecoderRegistry.shared.decode(high).image.iccProfile == icc)
    }

    @Test func thumbnailIsStoredAndUsed() throws {
        let image = try ImageDecoderRegistry.shared.decode(try HEIFTestPaths.fixture("thumbnail.heic")).image
        let encoded = try ImageEncoders.HEIF(thumbnailSize: 40).encode(image)
        let full = try ImageDecoderRegistry.shared.decode(encoded)
        #expect(full.userInfo[.heifThumbnailCountKey] as? Int == 1)
        var context = ImageDecodingContext(data: encoded, targetSize: ImageSize(width: 20, height: 20))
        context.contentMode = .aspectFit
        let small = try ImageDecoderRegistry.shared.decode(context)
        #expect(small.userInfo[.heifUsedThumbnailKey] as? Bool == true)
        #expect(small.image.width == 20 && small.image.height == 15)
    }

    @Test func defaultEncoderWritesHEICWhenPreferred() throws {
        let image = try ImageDecoderRegistry.shared.decode(try HEIFTestPaths.fixture("photo.heic")).image
        let encoder = ImageEncoders.Default(isHEIFPreferred: true)
        #expect(encoder.preferredType(for: image) == .heic)
        #expect(ImageType(try encoder.encode(image)) == .heic)
    }
}
