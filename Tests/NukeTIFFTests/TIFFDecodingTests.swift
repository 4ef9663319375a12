import Foundation
import NukeColor
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import NukeTIFF
import Testing

enum TIFFTestPaths {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tiff")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static func reference(_ name: String) throws -> Bitmap {
        try Netpbm.decode(Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    static func decode(_ data: Data, targetSize: ImageSize? = nil, limits: ImageLimits = .default, highBitDepth: Bool = false,
                       page: Int? = nil, strict: Bool = false) throws -> ImageContainer {
        var context = ImageDecodingContext(data: data, targetSize: targetSize, contentMode: .aspectFit,
                                           prefersHighBitDepth: highBitDepth, limits: limits, isStrict: strict)
        if let page { context.userInfo[ImageDecodingContext.tiffPageOption] = page }
        return try ImageDecoderRegistry.shared.decode(context)
    }
}

@Suite struct TIFFDecodingTests {
    typealias P = TIFFTestPaths

    @Test func registersAndSniffs() throws {
        #expect(ImageCodecs.linked.contains { $0.info.type == .tiff })
        #expect(ImageType(try P.fixture("rgb-lzw.tif")) == .tiff)
        #expect(ImageType(try P.fixture("rgb16-be.tif")) == .tiff)
        #expect(ImageType(try P.fixture("rgb-bigtiff.tif")) == .tiff)
    }

    @Test func headerWithoutTheLibrary() throws {
        guard case .parsed(let header) = ImageHeader.parse(try P.fixture("pages-3.tif")) else {
            Issue.record("no header")
            return
        }
        #expect(header.type == .tiff)
        #expect(header.width == 37 && header.height == 23)
        #expect(header.frameCount == 3)
        guard case .parsed(let rotated) = ImageHeader.parse(try P.fixture("orientation-6.tif")) else {
            Issue.record("no header")
            return
        }
        #expect(rotated.orientation == .right)
    }

    @Test func pagesDecodeOneByOne() throws {
        let data = try P.fixture("pages-3.tif")
        let pages = try TIFFPages(data)
        #expect(pages.count == 3)
        let first = try pages.decode(page: 0)
        #expect(first.userInfo[.tiffPageCountKey] as? Int == 3)
        #expect(first.image.bitmap == (try P.reference("pages-3.pam")))
        for index in 1..<3 {
            let page = try pages.decode(page: index)
            #expect(page.userInfo[.tiffPageKey] as? Int == index)
            #expect(page.image.bitmap == (try P.reference("pages-3.page\(index).pam")), "page \(index)")
        }
        #expect(throws: ImageCodecError.self) { try P.decode(data, page: 3) }
    }

    /// Decode to size streams rows into the resampler: the same pixels as the full decode
    /// shrunk by the same resampler, for scanlines, planar strips, tiles and libtiff's RGBA reader.
    @Test(arguments: ["rgb-lzw.tif", "rgb-planar-deflate.tif", "rgba-planar-tiled.tif", "rgb-tiled-lzw.tif", "ycbcr-raw.tif",
                      "gray16-lzw.tif", "palette-4.tif", "bilevel-tiled-g4.tif"])
    func decodeToSizeStreams(_ name: String) throws {
        let data = try P.fixture(name)
        let target = ImageSize(width: 12, height: 12)
        let small = try P.decode(data, targetSize: target)
        let full = try P.decode(data)
        let expected = full.image.bitmap.resized(toFit: target, contentMode: .aspectFit)
        #expect(small.image.bitmap.width == expected.width && small.image.bitmap.height == expected.height)
        let comparison = ImageComparison(small.image.bitmap, reference: expected, tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
    }

    @Test func cmykThroughTheColourManager() throws {
        let container = try P.decode(try P.fixture("cmyk-lzw.tif"))
        #expect(container.image.bitmap.pixelFormat == .rgb8)
        #expect(container.userInfo[.colorConversionKey] != nil)
        #expect(container.image.colorInfo.iccProfile == nil, "the rows are sRGB: the CMYK profile no longer describes them")
    }

    @Test func sixteenBitsOnRequest() throws {
        let container = try P.decode(try P.fixture("rgba16-le.tif"), highBitDepth: true)
        #expect(container.image.bitmap.pixelFormat == .rgba16)
        #expect(container.image.bitmap == (try P.reference("rgba16-le.16.pam")))
        let eight = try P.decode(try P.fixture("rgba16-le.tif"))
        #expect(eight.image.bitmap.pixelFormat == .rgba8)
    }

    @Test func reportsWhatTheFileIs() throws {
        let container = try P.decode(try P.fixture("rgb-tiled-lzw.tif"))
        #expect(container.userInfo[.tiffCompressionKey] as? String == "LZW")
        #expect(container.userInfo[.tiffTiledKey] as? Bool == true)
        #expect(container.userInfo[.tiffPhotometricKey] as? String == "RGB")
        #expect(container.userInfo[.tiffBitsPerSampleKey] as? Int == 8)
    }

    @Test func orientationIsAppliedOnlyWhenAsked() throws {
        let data = try P.fixture("orientation-6.tif")
        let stored = try P.decode(data)
        #expect(stored.image.orientation == .right)
        #expect(stored.image.bitmap.width == 37)
        var context = ImageDecodingContext(data: data)
        context.appliesOrientation = true
        let upright = try ImageDecoderRegistry.shared.decode(context)
        #expect(upright.image.bitmap.width == 23 && upright.image.bitmap.height == 37)
        #expect(upright.image.bitmap == stored.image.bitmap.oriented(.right))
    }

    /// libtiff's warnings about the directory (a private tag it does not know) are reported apart
    /// and a strict decode accepts them; warnings while decoding pixels are refused (below).
    @Test func directoryWarningsAreNotRefused() throws {
        let container = try P.decode(try P.fixture("private-tag.tif"), strict: true)
        let warnings = try #require(container.userInfo[.tiffDirectoryWarningsKey] as? ImageDecodingWarnings)
        #expect(warnings.count >= 1)
        #expect(container.userInfo[.warningsKey] == nil)
    }

    /// A JPEG strip 300 bytes short: libjpeg warns ("Premature end of JPEG file") while libtiff
    /// decodes it. The warning is reported, and a strict decode refuses the file.
    @Test func pixelWarningsAreRefusedWhenStrict() throws {
        let data = try P.fixture("jpeg-short-strip.tif")
        let relaxed = try P.decode(data)
        let warnings = try #require(relaxed.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.count >= 1)
        #expect {
            try P.decode(data, strict: true)
        } throws: { error in
            (error as? ImageCodecError)?.code == .corrupt
        }
    }

    // The 100,000 × 100,000 bomb is in Tests/BombCorpus (BombTests, NukeBombAllocations).

    @Test func truncatedStripsAreIncomplete() throws {
        let whole = try P.fixture("rgb-none.tif")
        #expect {
            try P.decode(whole.prefix(whole.count - 500))
        } throws: { error in
            guard let error = error as? ImageCodecError else { return false }
            return error.code == .incomplete && error.format == .tiff && error.description.contains("libtiff")
        }
    }
}
