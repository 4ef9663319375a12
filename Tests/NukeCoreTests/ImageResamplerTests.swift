import Foundation
import Testing
@testable import NukeCore
import NukePixels

struct ImageResamplerTests {
    // MARK: - Quality against Pillow

    /// Lowest PSNR (dB) accepted against Pillow, per fixture; measured values in the comments
    /// (the differences are Pillow's 8-bit rounding between passes; ours stay `Float`). With
    /// alpha the PSNR is on premultiplied colour, what is seen once composited.
    static let pillowCases: [(name: String, minimumPSNR: Double)] = [
        ("thumbnail-rgb-64", 54.5),  // 55.46
        ("thumbnail-rgb-32", 54.5),  // 55.42
        ("thumbnail-rgb-100", 54.5),  // 55.15
        ("thumbnail-rgba-64", 55.5),  // 56.07 (premultiplied), 37.9 straight, 51.3 where alpha ≥ 64
        ("fill-rgb-64", 54.5),  // 55.47
        ("fill-rgba-48", 55.5),  // 56.09 (premultiplied), 29.3 straight, 51.3 where alpha ≥ 64
    ]

    /// A codec's reduction rounded up (libjpeg at 2/8: 401 × 301 pixels for 400.75 × 300.75 of
    /// the image) resized from that box, as Pillow's `thumbnail` resizes from `draft()`'s box;
    /// without the box the thumbnail is a fraction of a pixel off.
    @Test func aRoundedUpReductionIsResizedFromItsBox() throws {
        let manifest = try ResamplerFixtures.manifest()
        let fixture = try #require(manifest.cases.first { $0.name == "box-rgb-64" })
        let extent = try #require(fixture.extent)
        let source = ResamplerFixtures.photo(width: fixture.source.width, height: fixture.source.height, alpha: fixture.source.alpha)
        #expect(ResamplerFixtures.fnv1a64(source.packedBytes) == fixture.source.fnv1a64, "the Swift test pattern differs from the script's")
        let reference = try ResamplerFixtures.readPAM(fixture.reference)
        let size = ImageSize(width: fixture.referenceSize.width, height: fixture.referenceSize.height)
        let boxed = source.resized(to: size, sourceExtent: (extent.width, extent.height))
        let whole = source.resized(to: size)
        let psnr = ResamplerFixtures.psnr(boxed, reference)
        let unboxed = ResamplerFixtures.psnr(whole, reference)
        print("ImageResampler vs Pillow \(manifest.pillow) box-rgb-64: PSNR \(psnr) dB from the box, \(unboxed) dB from the whole source")
        #expect(psnr >= 54.5, "\(psnr) dB")  // 55.25
        #expect(unboxed < psnr - 2, "the box moves the samples: \(unboxed) against \(psnr) dB")  // 52.23
    }

    @Test(arguments: pillowCases)
    func matchesPillowThumbnail(_ name: String, minimumPSNR: Double) throws {
        let manifest = try ResamplerFixtures.manifest()
        let fixture = try #require(manifest.cases.first { $0.name == name }, "no fixture \(name)")
        let source = ResamplerFixtures.photo(width: fixture.source.width, height: fixture.source.height, alpha: fixture.source.alpha)
        #expect(ResamplerFixtures.fnv1a64(source.packedBytes) == fixture.source.fnv1a64, "the Swift test pattern differs from the script's")
        let mode: ImageDecodingContext.ContentMode = fixture.contentMode == "aspectFill" ? .aspectFill : .aspectFit
        let size = ImageSize(width: source.width, height: source.height)
            .fitted(to: ImageSize(width: fixture.target.width, height: fixture.target.height), contentMode: mode)
        #expect(size == ImageSize(width: fixture.referenceSize.width, height: fixture.referenceSize.height))
        let reference = try ResamplerFixtures.readPAM(fixture.reference)
        let resized = source.resized(to: size)
        try #require(resized.width == reference.width && resized.height == reference.height)
        let psnr = ResamplerFixtures.psnr(resized, reference, premultiplied: true)
        let straight = ResamplerFixtures.psnr(resized, reference)
        let opaque = ResamplerFixtures.psnr(resized, reference, minimumAlpha: 64)
        // Straight colour differs most where alpha is small: Pillow premultiplies in 8 bits
        // (RGBa), so its colours there are quantised to steps of 255 / alpha.
        print("ImageResampler vs Pillow \(manifest.pillow) \(name): PSNR \(psnr) dB (straight colour: \(straight) dB, alpha ≥ 64: \(opaque) dB)")
        #expect(psnr >= minimumPSNR, "\(name): \(psnr) dB")
        #expect(opaque >= 50, "\(name): \(opaque) dB where alpha ≥ 64")
    }

    // MARK: - Streaming

    static let allFormats: [PixelFormat] = [.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .grayAlpha16, .rgb16, .rgba16]

    /// A deterministic bitmap of noise with `padding` bytes after each row.
    static func noise(width: Int, height: Int, format: PixelFormat, alphaMode: AlphaMode? = nil, padding: Int = 0, seed: UInt32 = 1) -> Bitmap {
        var state = seed
        let stride = width * format.bytesPerPixel + padding
        return Bitmap(width: width, height: height, pixelFormat: format, alphaMode: alphaMode, bytesPerRow: stride) { raw in
            for i in 0..<raw.count {
                state = state &* 1_664_525 &+ 1_013_904_223
                raw[i] = UInt8(truncatingIfNeeded: state >> 24)
            }
        }
    }

    @Test(arguments: allFormats)
    func pushingRowsOneByOneEqualsResizingTheWholeBitmap(_ format: PixelFormat) {
        let source = Self.noise(width: 211, height: 157, format: format, padding: 5)
        let whole = source.resized(to: ImageSize(width: 23, height: 17))
        let resampler = ImageResampler(sourceWidth: 211, sourceHeight: 157, pixelFormat: format, alphaMode: source.alphaMode,
                                       targetWidth: 23, targetHeight: 17)
        #expect(resampler.outputSize == ImageSize(width: 23, height: 17))
        let rowBytes = 211 * format.bytesPerPixel
        source.withUnsafeBytes { raw in
            for y in 0..<157 {
                // A fresh, exactly-sized copy each time: the resampler keeps no pointer to a row.
                let row = Array(raw[(y * source.bytesPerRow)..<(y * source.bytesPerRow + rowBytes)])
                row.withUnsafeBytes { resampler.push(row: $0) }
                #expect(resampler.isComplete == (y == 156))
            }
        }
        let streamed = resampler.finish()
        #expect(streamed == whole)
        #expect(streamed.pixelFormat == format && streamed.alphaMode == source.alphaMode)

        // Batches of uneven size through push(rows:count:bytesPerRow:) give the same result.
        let batched = ImageResampler(sourceWidth: 211, sourceHeight: 157, pixelFormat: format, alphaMode: source.alphaMode,
                                     targetWidth: 23, targetHeight: 17)
        source.withUnsafeBytes { raw in
            var y = 0
            for count in [1, 7, 64, 85] {
                let start = y * source.bytesPerRow
                batched.push(rows: UnsafeRawBufferPointer(rebasing: raw[start...]), count: count, bytesPerRow: source.bytesPerRow)
                y += count
            }
        }
        #expect(batched.finish() == whole)
    }

    @Test func memoryIsBoundedByAFewRows() {
        // A 12-megapixel photo to a 256-pixel thumbnail: 8 × 8 boxes, then a short cubic window.
        let resampler = ImageResampler(sourceWidth: 4256, sourceHeight: 2832, pixelFormat: .rgb8, alphaMode: .none,
                                       targetWidth: 256, targetHeight: 170)
        #expect(resampler.reductionFactors == (8, 8))
        #expect(resampler.verticalTaps <= 10)
    }

    // MARK: - Alpha

    /// Fully transparent red on the left, opaque blue on the right.
    static func redBlue(width: Int, height: Int, format: PixelFormat) -> Bitmap {
        let max = format.bitsPerChannel == 8 ? 255 : 65535
        var samples: [Int] = []
        for _ in 0..<height {
            for x in 0..<width {
                samples += x < width / 2 ? [max, 0, 0, 0] : [0, 0, max, max]
            }
        }
        return Bitmap(width: width, height: height, pixelFormat: format) { raw in
            for (i, v) in samples.enumerated() {
                if format.bitsPerChannel == 8 { raw[i] = UInt8(v) } else { raw.storeBytes(of: UInt16(v), toByteOffset: 2 * i, as: UInt16.self) }
            }
        }
    }

    @Test(arguments: [PixelFormat.rgba8, .rgba16], [ImageSize(width: 10, height: 10), ImageSize(width: 7, height: 3), ImageSize(width: 33, height: 29)])
    func transparentColourDoesNotBleed(_ format: PixelFormat, _ size: ImageSize) {
        let source = Self.redBlue(width: 64, height: 40, format: format)
        let small = source.resized(to: size)
        var edge = 0
        for y in 0..<small.height {
            for x in 0..<small.width where small.sample(x: x, y: y, channel: 3) > 0 {
                #expect(small.sample(x: x, y: y, channel: 0) == 0, "reddish pixel at \(x),\(y)")
                #expect(small.sample(x: x, y: y, channel: 1) == 0)
                if small.sample(x: x, y: y, channel: 3) < (format.bitsPerChannel == 8 ? 255 : 65535) { edge += 1 }
            }
        }
        #expect(edge > 0, "the resampled edge has partly transparent pixels")
        // The same pixels with alpha resampled like colour do bleed: the check above can fail.
        var mixed = source
        mixed.alphaMode = .none
        let bled = mixed.resized(to: size)
        #expect((0..<bled.width).contains { x in bled.sample(x: x, y: 0, channel: 3) > 0 && bled.sample(x: x, y: 0, channel: 0) > 0 })
    }

    @Test func averagesColourWeightedByAlpha() {
        // Opaque white beside transparent black: the colour stays white, alpha halves.
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .rgba8, bytes: [255, 255, 255, 255, 0, 0, 0, 0])
        #expect(bitmap.resized(to: ImageSize(width: 1, height: 1)).packedBytes == [255, 255, 255, 128])
    }

    @Test(arguments: [PixelFormat.grayAlpha8, .rgba8, .grayAlpha16, .rgba16])
    func premultipliedStaysPremultiplied(_ format: PixelFormat) {
        // Premultiplied noise: every colour sample at most its alpha.
        var source = Self.noise(width: 90, height: 61, format: format, alphaMode: .premultiplied)
        let alpha = format.channelCount - 1
        source.withUnsafeMutableBytes { raw in
            let size = format.bytesPerChannel
            for p in stride(from: 0, to: raw.count, by: format.bytesPerPixel) {
                func get(_ c: Int) -> Int { size == 1 ? Int(raw[p + c]) : Int(raw.loadUnaligned(fromByteOffset: p + 2 * c, as: UInt16.self)) }
                func set(_ c: Int, _ v: Int) { if size == 1 { raw[p + c] = UInt8(v) } else { raw.storeBytes(of: UInt16(v), toByteOffset: p + 2 * c, as: UInt16.self) } }
                for c in 0..<alpha { set(c, min(get(c), get(alpha))) }
            }
        }
        let small = source.resized(to: ImageSize(width: 13, height: 11))
        #expect(small.alphaMode == .premultiplied)
        for y in 0..<small.height {
            for x in 0..<small.width {
                for c in 0..<alpha { #expect(small.sample(x: x, y: y, channel: c) <= small.sample(x: x, y: y, channel: alpha)) }
            }
        }
    }

    // MARK: - Formats and sizes

    @Test(arguments: allFormats)
    func uniformImageStaysUniform(_ format: PixelFormat) {
        let wide = format.bitsPerChannel == 16
        let values = [77, 140, 201, 180].prefix(format.channelCount).map { wide ? $0 * 257 : $0 }
        let source = Bitmap(width: 97, height: 61, pixelFormat: format) { raw in
            for p in 0..<(97 * 61) {
                for (c, v) in values.enumerated() {
                    let i = p * format.channelCount + c
                    if wide { raw.storeBytes(of: UInt16(v), toByteOffset: 2 * i, as: UInt16.self) } else { raw[i] = UInt8(v) }
                }
            }
        }
        let small = source.resized(to: ImageSize(width: 13, height: 7))
        #expect((small.width, small.height) == (13, 7))
        #expect(small.pixelFormat == format)
        for y in 0..<7 {
            for x in 0..<13 {
                for (c, v) in values.enumerated() { #expect(small.sample(x: x, y: y, channel: c) == v) }
            }
        }
    }

    @Test func sixteenBitsAgreeWithEightBits() {
        let eight = ResamplerFixtures.photo(width: 200, height: 150, alpha: true)
        let sixteen = eight.converted(to: .rgba16)
        let size = ImageSize(width: 37, height: 28)
        let a = eight.resized(to: size), b = sixteen.resized(to: size)
        #expect(b.pixelFormat == .rgba16)
        for y in 0..<size.height {
            for x in 0..<size.width {
                // Where 8-bit alpha rounds to 0 its colour is 0; 16-bit keeps a trace of alpha.
                for c in 0..<4 where c == 3 || a.sample(x: x, y: y, channel: 3) > 0 {
                    let wide = Double(b.sample(x: x, y: y, channel: c)) / 257
                    #expect(abs(wide - Double(a.sample(x: x, y: y, channel: c))) <= 1.5, "\(x),\(y),\(c)")
                }
            }
        }
    }

    @Test func grayEqualsEachChannelOfColour() {
        let gray = Self.noise(width: 131, height: 71, format: .gray8)
        let colour = gray.converted(to: .rgb8)
        let size = ImageSize(width: 17, height: 9)
        let g = gray.resized(to: size), c = colour.resized(to: size)
        for y in 0..<9 {
            for x in 0..<17 {
                for channel in 0..<3 { #expect(c.sample(x: x, y: y, channel: channel) == g.sample(x: x, y: y, channel: 0)) }
            }
        }
    }

    @Test(arguments: [
        (1, 1, 1, 1), (2, 2, 1, 1), (97, 89, 13, 11), (101, 103, 53, 59), (1000, 1, 10, 1), (1, 1000, 1, 10),
        (4256, 3, 256, 1), (7, 5, 7, 5), (7, 5, 7, 2), (3, 997, 2, 3),
    ])
    func resizesAnySize(_ width: Int, _ height: Int, _ targetWidth: Int, _ targetHeight: Int) {
        // A ramp: each output sample lies within the source's range and the ramp's order survives.
        let source = Bitmap(width: width, height: height, pixelFormat: .gray8) { raw in
            for y in 0..<height { for x in 0..<width { raw[y * width + x] = UInt8(40 + 160 * (x + y) / max(1, width + height - 2)) } }
        }
        let small = source.resized(to: ImageSize(width: targetWidth, height: targetHeight))
        #expect((small.width, small.height) == (targetWidth, targetHeight))
        let samples = small.packedBytes
        #expect(samples.allSatisfy { (38...202).contains($0) }, "\(samples)")
        #expect(samples.first! <= samples.last!)
        if (width, height) == (2, 2) { #expect(samples == [120]) }
    }

    @Test func averagesIntegerBlocks() {
        // 4×2 → 1×1: a 2-pixel horizontal box, then a 2 → 1 cubic each way (equal weights): the mean of all 8.
        let bitmap = Bitmap(width: 4, height: 2, pixelFormat: .gray8, bytes: [0, 10, 100, 200, 20, 30, 50, 250])
        let small = bitmap.resized(to: ImageSize(width: 1, height: 1))
        #expect(small.packedBytes == [83])
        #expect(bitmap.resized(to: ImageSize(width: 4, height: 2)) == bitmap)
    }

    // MARK: - Target size

    @Test(arguments: [
        // source, target, mode, expected
        (ImageSize(width: 640, height: 427), ImageSize(width: 100, height: 100), ImageDecodingContext.ContentMode.aspectFit, ImageSize(width: 100, height: 67)),
        (ImageSize(width: 61, height: 45), ImageSize(width: 30, height: 30), .aspectFit, ImageSize(width: 30, height: 22)),
        (ImageSize(width: 50, height: 40), ImageSize(width: 100, height: 100), .aspectFit, ImageSize(width: 50, height: 40)),
        (ImageSize(width: 10_000, height: 1), ImageSize(width: 10, height: 10), .aspectFit, ImageSize(width: 10, height: 1)),
        (ImageSize(width: 4256, height: 2832), ImageSize(width: 256, height: 256), .aspectFit, ImageSize(width: 256, height: 170)),
        (ImageSize(width: 4256, height: 2832), ImageSize(width: 256, height: 256), .aspectFill, ImageSize(width: 385, height: 256)),
        (ImageSize(width: 400, height: 300), ImageSize(width: 64, height: 64), .aspectFill, ImageSize(width: 85, height: 64)),
        (ImageSize(width: 300, height: 400), ImageSize(width: 64, height: 64), .aspectFill, ImageSize(width: 64, height: 85)),
        (ImageSize(width: 100, height: 1000), ImageSize(width: 200, height: 200), .aspectFill, ImageSize(width: 100, height: 1000)),
        (ImageSize(width: 100, height: 1000), ImageSize(width: 50, height: 200), .aspectFill, ImageSize(width: 50, height: 500)),
        (ImageSize(width: 1, height: 1), ImageSize(width: 1, height: 1), .aspectFill, ImageSize(width: 1, height: 1)),
        (ImageSize(width: 3, height: 100_000), ImageSize(width: 64, height: 64), .aspectFit, ImageSize(width: 1, height: 64)),
    ])
    func targetSize(_ source: ImageSize, _ target: ImageSize, _ mode: ImageDecodingContext.ContentMode, _ expected: ImageSize) {
        let size = source.fitted(to: target, contentMode: mode)
        #expect(size == expected)
        #expect(size.width <= source.width && size.height <= source.height && size.width >= 1 && size.height >= 1)
        if size != source {
            if mode == .aspectFit { #expect(size.width <= target.width && size.height <= target.height) }
            if mode == .aspectFill { #expect(size.width >= target.width && size.height >= target.height) }
        }
    }

    @Test func fitsWithinTheRequestedBox() {
        let bitmap = Self.noise(width: 120, height: 80, format: .rgb8)
        let fitted = bitmap.resized(toFit: ImageSize(width: 30, height: 30))
        #expect((fitted.width, fitted.height) == (30, 20))
        let filled = bitmap.resized(toFit: ImageSize(width: 30, height: 30), contentMode: .aspectFill)
        #expect((filled.width, filled.height) == (45, 30))
        #expect(bitmap.resized(toFit: ImageSize(width: 500, height: 500)) == bitmap)
    }

    // MARK: - Misuse traps

    @Test func upscalingTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = ImageResampler(sourceWidth: 10, sourceHeight: 10, pixelFormat: .rgb8, alphaMode: .none, targetWidth: 11, targetHeight: 5)
        }
    }

    @Test func tooManyRowsTrap() async {
        await #expect(processExitsWith: .failure) {
            let resampler = ImageResampler(sourceWidth: 2, sourceHeight: 1, pixelFormat: .gray8, alphaMode: .none, targetWidth: 1, targetHeight: 1)
            let row: [UInt8] = [1, 2]
            row.withUnsafeBytes { resampler.push(row: $0) }
            row.withUnsafeBytes { resampler.push(row: $0) }
        }
    }
}
