import Foundation
import NukeBMP
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import Synchronization
import Testing

@Suite struct BMPDecoderTests {
    /// Every variant: the header version, bit count and compression it reports, its pixel
    /// format, and its pixels against the reference.
    @Test(arguments: [
        ("pil-1.bmp", 40, 1, "none", PixelFormat.gray8),
        ("pal2.bmp", 40, 2, "none", .rgb8),
        ("pal4.bmp", 40, 4, "none", .rgb8),
        ("pal4-6colors.bmp", 40, 4, "none", .rgb8),
        ("pil-8-gray.bmp", 40, 8, "none", .gray8),
        ("core-pal8.bmp", 12, 8, "none", .rgb8),
        ("core-24.bmp", 12, 24, "none", .rgb8),
        ("os2v2-16-24.bmp", 16, 24, "none", .rgb8),
        ("os2v2-64-pal4.bmp", 64, 4, "none", .rgb8),
        ("topdown-24.bmp", 40, 24, "none", .rgb8),
        ("rgb16-555.bmp", 40, 16, "none", .rgb8),
        ("rgb16-565.bmp", 40, 16, "bitfields", .rgb8),
        ("rgb16-v3-565.bmp", 56, 16, "bitfields", .rgb8),
        ("rgba16-4444.bmp", 56, 16, "bitfields", .rgba8),
        ("rgb32-101010.bmp", 40, 32, "bitfields", .rgb8),
        ("rgba32-v4.bmp", 108, 32, "bitfields", .rgba8),
        ("rgba32-v5.bmp", 124, 32, "bitfields", .rgba8),
        ("rgba32-alphabitfields.bmp", 40, 32, "alphabitfields", .rgba8),
        ("rgba16-1555-alphabitfields.bmp", 40, 16, "alphabitfields", .rgba8),
        ("pil-32.bmp", 40, 32, "none", .rgb8),
        ("rgba32-v4-bi-rgb.bmp", 108, 32, "none", .rgba8),
        ("rle8.bmp", 40, 8, "rle8", .rgb8),
        ("rle4.bmp", 40, 4, "rle4", .rgb8),
        ("rle8-delta.bmp", 40, 8, "rle8", .rgba8),
        ("os2-rle24.bmp", 64, 24, "rle24", .rgb8),
    ])
    func decodesVariant(_ name: String, headerSize: Int, bits: Int, compression: String, format: PixelFormat) throws {
        let container = try BMPTest.decode(name)
        #expect(container.type == .bmp)
        #expect(container.userInfo[.bmpHeaderSizeKey] as? Int == headerSize)
        #expect(container.userInfo[.bmpBitCountKey] as? Int == bits)
        #expect(container.userInfo[.bmpCompressionKey] as? String == compression)
        #expect(container.image.bitmap.pixelFormat == format)
        let fixture = try #require(BMPConformance.plan.manifest.fixtures.first { $0.file == name })
        let reference = try BMPTest.reference(name.replacingOccurrences(of: ".bmp", with: ".pam"))
        let comparison = ImageComparison(container.image.bitmap, reference: reference, tolerance: .maxDifference(fixture.tolerance ?? 0))
        #expect(comparison.isMatch, "\(name): \(comparison)")
    }

    @Test func skippedRLEPixelsAreTransparent() throws {
        let bitmap = try BMPTest.decode("rle8-delta.bmp").image.bitmap
        // File row 5 is skipped by the delta: displayed row 16 - 1 - 5 = 10.
        #expect(bitmap.sample(x: 0, y: 10, channel: 3) == 0)
        #expect(bitmap.sample(x: 0, y: 11, channel: 3) == 255)
    }

    @Test func allZeroAlphaIsOpaque() throws {
        let bitmap = try BMPTest.decode("rgba32-v4-zero-alpha.bmp").image.bitmap
        #expect(bitmap.pixelFormat == .rgba8)
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width { #expect(bitmap.sample(x: x, y: y, channel: 3) == 255) }
        }
    }

    @Test func reportsTheEmbeddedICCProfile() throws {
        let container = try BMPTest.decode("v5-icc.bmp")
        let profile = try #require(container.image.iccProfile)
        let fixture = try #require(BMPConformance.plan.manifest.fixtures.first { $0.file == "v5-icc.bmp" })
        #expect(profile.count == fixture.iccSize)
        #expect(ICCProfileHeader(profile)?.colorSpace == .rgb)
        #expect(try BMPTest.decode("pil-24.bmp").image.iccProfile == nil)
    }

    @Test(arguments: ["q-pal8-oversize-palette.bmp", "q-pal8-index-out-of-range.bmp"])
    func questionableFilesWarnAndStrictDecodesRefuseThem(_ name: String) throws {
        let container = try BMPTest.decode(name)
        let warnings = try #require(container.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.count >= 1)
        let error = #expect(throws: ImageCodecError.self) { try BMPTest.decode(name) { $0.isStrict = true } }
        #expect(error?.code == .corrupt)
        #expect(error?.format == .bmp)
    }

    @Test func goodFilesHaveNoWarnings() throws {
        for name in ["pil-24.bmp", "rle8.bmp", "rgba32-v5.bmp", "q-bad-file-size.bmp", "q-pixels-offset-gap.bmp"] {
            #expect(try BMPTest.decode(name).userInfo[.warningsKey] == nil, "\(name)")
        }
    }

    /// Bad files fail with an error that names the format and says what is wrong.
    @Test(arguments: [
        ("bad-truncated-pixels.bmp", ImageCodecError.Code.incomplete),
        ("bad-truncated-header.bmp", .incomplete),
        ("bad-header-size.bmp", .corrupt),
        ("bad-zero-width.bmp", .corrupt),
        ("bad-bit-count.bmp", .corrupt),
        ("bad-offset-past-end.bmp", .incomplete),
        ("bad-jpeg-compression.bmp", .unsupported),
        ("bad-huge-dimensions.bmp", .limitExceeded),
    ])
    func badFilesFail(_ name: String, code: ImageCodecError.Code) throws {
        let data = try BMPTest.data(name)
        if ImageType(data) == .bmp {   // a DIB header size of 41 is no BMP to the sniffer
            let error = #expect(throws: ImageCodecError.self) { try BMPTest.decode(data) }
            #expect(error?.code == code, "\(name): \(String(describing: error))")
            #expect(error?.format == .bmp)
        }
        // The plugin's own decoder says the same, without the registry's header gate.
        let direct = #expect(throws: ImageCodecError.self) { try ImageDecoders.BMP(context: ImageDecodingContext(data: data)).decode(data) }
        #expect(direct?.code == code, "\(name): \(String(describing: direct))")
        #expect(direct?.format == .bmp)
        #expect(direct?.codec?.contains("NukeBMP") == true)
    }

    @Test func allZeroMasksAreCorrupt() throws {
        let data = BMPTest.file(width: 2, height: 1, bits: 32, compression: 3, extra: [UInt8](repeating: 0, count: 12), pixels: [UInt8](repeating: 7, count: 8))
        let error = #expect(throws: ImageCodecError.self) { try BMPTest.decode(data) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("masks") == true)
    }

    @Test func rleRunsPastTheRowAreClippedWithAWarning() throws {
        // 4×2 RLE8: a run of 9 pixels on a 4-pixel row, end of line, 4 pixels, end of bitmap.
        let palette: [UInt8] = [0, 0, 255, 0, 0, 255, 0, 0]
        let stream: [UInt8] = [9, 1, 0, 0, 4, 0, 0, 1]
        let data = BMPTest.file(width: 4, height: 2, bits: 8, compression: 1, colors: 2, extra: palette, pixels: stream)
        let container = try BMPTest.decode(data)
        #expect(container.image.bitmap.pixelFormat == .rgb8)
        #expect(container.image.bitmap.row(1) == [0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0])   // index 1: green, bottom row
        #expect(container.image.bitmap.row(0) == [255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0])
        let warnings = try #require(container.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.description.contains("past the end of a row"))
    }

    @Test func rleWithoutItsEndMarkerIsTransparentBelow() throws {
        let palette: [UInt8] = [0, 0, 255, 0]
        let data = BMPTest.file(width: 3, height: 2, bits: 8, compression: 1, colors: 1, extra: palette, pixels: [3, 0])
        let container = try BMPTest.decode(data)
        #expect(container.image.bitmap.pixelFormat == .rgba8)
        #expect(container.image.bitmap.row(0) == [UInt8](repeating: 0, count: 12))   // the top row was never written
        #expect(container.userInfo[.warningsKey] != nil)
    }

    @Test func paletteIndexOutOfRangeIsBlack() throws {
        // 1-entry palette (white), indices 0 and 5.
        let data = BMPTest.file(width: 2, height: 1, bits: 8, colors: 1, extra: [255, 255, 255, 0], pixels: [0, 5, 0, 0])
        let container = try BMPTest.decode(data)
        #expect(container.image.bitmap.pixelFormat == .gray8)   // a gray palette
        #expect(container.image.bitmap.row(0) == [255, 0])
        #expect(container.userInfo[.warningsKey] != nil)
    }

    @Test func overflowingSizesAreRefusedWithoutAllocating() throws {
        let requested = Mutex(0)
        let counting = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            requested.withLock { $0 += byteCount }
            return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
        }
        for (width, height) in [(Int32.max, Int32.max), (Int32.max, -Int32.max), (1, Int32.max), (100_000, 100_000)] {
            let data = BMPTest.file(width: width, height: height, bits: 32, pixels: [1, 2, 3, 4])
            let error = #expect(throws: ImageCodecError.self) {
                try ImageDecoders.BMP(context: ImageDecodingContext(data: data, limits: .unlimited, allocator: counting)).decode(data)
            }
            #expect([.incomplete, .corrupt, .limitExceeded].contains(error?.code), "\(width)×\(height): \(String(describing: error))")
        }
        #expect(requested.withLock { $0 } == 0)
    }

    @Test func decodesToSize() throws {
        let full = try BMPTest.decode("pil-24.bmp").image.bitmap
        let container = try BMPTest.decode("pil-24.bmp") { $0.targetSize = ImageSize(width: 6, height: 4) }
        let bitmap = container.image.bitmap
        #expect(bitmap.width == 6 && bitmap.height == 4)
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 24, height: 16))
        let plan = ImageScalePlan(originalSize: ImageSize(width: 24, height: 16), target: ImageSize(width: 6, height: 4),
                                  contentMode: .aspectFill, prefersFastScaling: false)
        #expect(bitmap == plan.finish(full))
    }

    /// Opaque rows stream into the resampler: a decode to size asks the allocator for no
    /// full-size image, and gives what a full decode resized gives. RLE and alpha images are
    /// decoded whole, then resized.
    @Test(arguments: ["pil-24.bmp", "pal4.bmp", "pil-8-gray.bmp", "rgb16-565.bmp", "rle8.bmp", "rgba32-v5.bmp", "topdown-24.bmp"])
    func decodesToSizeLikeAFullDecodeResized(_ name: String) throws {
        let full = try BMPTest.decode(name).image.bitmap
        let target = ImageSize(width: 10, height: 5)
        let requested = Mutex(0)
        let counting = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            requested.withLock { $0 += byteCount }
            return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
        }
        let container = try BMPTest.decode(name) {
            $0.targetSize = target
            $0.allocator = counting
        }
        let plan = try #require(ImageDecodingContext(data: Data(), targetSize: target).scalePlan(for: ImageSize(width: full.width, height: full.height)))
        #expect(container.image.bitmap == plan.finish(full), "\(name)")
        let streamed = !["rle8.bmp", "rgba32-v5.bmp"].contains(name)
        #expect((requested.withLock { $0 } == 0) == streamed, "\(name): \(requested.withLock { $0 }) bytes")
    }

    @Test func bigImagesDecodeToSizeWithoutTheFullImage() throws {
        let width = 3000, height = 2000
        let bitmap = Bitmap(width: width, height: height, pixelFormat: .rgb8, bytes: (0..<(width * height * 3)).map { UInt8(truncatingIfNeeded: $0 / 7) })
        let data = try ImageEncoders.BMP().encode(Image(bitmap: bitmap))
        let requested = Mutex(0)
        let counting = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            requested.withLock { $0 += byteCount }
            return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
        }
        let container = try BMPTest.decode(data) {
            $0.targetSize = ImageSize(width: 300, height: 200)
            $0.allocator = counting
        }
        #expect(container.image.width == 300 && container.image.height == 200)
        #expect(requested.withLock { $0 } == 0)
    }

    /// A decode to size checks the limits before the resampler's row buffers (which follow the width).
    @Test func decodesToSizeCheckTheLimitsFirst() throws {
        let data = BMPTest.file(width: 2_000_000_000, height: 2, bits: 24, pixels: [UInt8](repeating: 1, count: 64))
        let requested = Mutex(0)
        let counting = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            requested.withLock { $0 += byteCount }
            return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
        }
        let context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 10, height: 1), limits: .untrusted, allocator: counting)
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoders.BMP(context: context).decode(data) }
        #expect(error?.code == .limitExceeded)
        #expect(requested.withLock { $0 } == 0)
    }

    @Test func cancelledDecodesStop() throws {
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let error = #expect(throws: ImageCodecError.self) { try BMPTest.decode("pil-24.bmp") { $0.cancellation = cancellation } }
        #expect(error?.code == .cancelled)
    }

    @Test func headerHookReadsTheSize() throws {
        let data = try BMPTest.data("rgba32-v5.bmp")
        guard case .parsed(let header) = BMPPlugin.parseHeader(data.prefix(160)) else {
            Issue.record("no header")
            return
        }
        #expect(header.width == 24 && header.height == 16 && header.hasAlpha == true)
        #expect(BMPPlugin.parseHeader(data.prefix(20)) == .needsMoreData)
    }
}
