import Foundation
import NukeConformance
import NukeCore
import Testing
@testable import NukePNG

/// Progressive decoding with ``ImageDecoders/PNG``: previews are monotonic and the final
/// image equals a one-shot decode, however the data is split.
@Suite struct ImageDecodersPNGProgressiveTests {
    /// Inputs: every fixture plus synthetic interlaced and non-interlaced images.
    static let inputs: [String] = {
        var names = PNGConformance.manifest.valid.map(\.file)
        names += ["synthetic-rgba8", "synthetic-rgba8-interlaced", "synthetic-gray16-interlaced", "synthetic-rgb8-1x1-interlaced"]
        return names
    }()

    static func data(_ name: String) throws -> Data {
        switch name {
        case "synthetic-rgba8":
            return try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 131, height: 77, format: .rgba8)))
        case "synthetic-rgba8-interlaced":
            return try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true))
                .encode(Image(bitmap: PNGTestImages.gradient(width: 131, height: 77, format: .rgba8)))
        case "synthetic-gray16-interlaced":
            return try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true))
                .encode(Image(bitmap: PNGTestImages.gradient(width: 45, height: 29, format: .gray16)))
        case "synthetic-rgb8-1x1-interlaced":
            return try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true))
                .encode(Image(bitmap: PNGTestImages.gradient(width: 1, height: 1, format: .rgb8)))
        default:
            return try PNGTestPaths.fixture(name)
        }
    }

    /// Checks that previews advance and the final image is the one-shot decode.
    static func check(_ data: Data, ends: [Int], highBitDepth: Bool = false) throws {
        let expected = try PNGTestDecoding.decode(data, highBitDepth: highBitDepth)
        let (previews, final) = try PNGTestDecoding.progressive(data, ends: ends, highBitDepth: highBitDepth)
        #expect(final.image == expected.image)
        #expect(final.isPreview == false)
        let interlaced = expected.userInfo[.isProgressiveKey] as? Bool ?? false
        var last = 0
        for preview in previews {
            #expect(preview.isPreview)
            #expect(preview.image.bitmap.width == expected.image.width)
            #expect(preview.image.bitmap.pixelFormat == expected.image.bitmap.pixelFormat)
            let progress = try #require(preview.userInfo[interlaced ? .scanNumberKey : .rowCountKey] as? Int)
            #expect(progress > last, "previews must advance")
            #expect(progress >= 1 && progress <= (interlaced ? 7 : expected.image.height))
            last = progress
        }
    }

    @Test(arguments: inputs)
    func oneByteAtATime(_ name: String) throws {
        let data = try Self.data(name)
        try Self.check(data, ends: Array(1..<data.count))
    }

    @Test(arguments: inputs)
    func randomChunks(_ name: String) throws {
        let data = try Self.data(name)
        var generator = SeededGenerator(seed: UInt64(data.count))
        for _ in 0..<4 {
            var ends: [Int] = []
            var end = 0
            while end < data.count {
                end += Int.random(in: 1...max(1, data.count / 5), using: &generator)
                ends.append(end)
            }
            try Self.check(data, ends: ends)
            try Self.check(data, ends: ends, highBitDepth: true)
        }
    }

    @Test(arguments: inputs)
    func wholeFileAsOnePartialCall(_ name: String) throws {
        let data = try Self.data(name)
        let decoder = ImageDecoders.PNG()
        // An interlaced file gives one preview per pass, one per call with the same data.
        var previews: [ImageContainer] = []
        while let preview = decoder.decodePartiallyDownloadedData(data), previews.count < 8 {
            previews.append(preview)
        }
        let preview = try #require(previews.last)
        #expect(previews.count <= 7)
        let final = try decoder.decode(data)
        #expect(preview.image == final.image)
        #expect(final.image == (try PNGTestDecoding.decode(data)).image)
        #expect(decoder.decodePartiallyDownloadedData(data) == nil, "nothing new, no preview")
    }

    @Test func interlacedPreviewsArePerPassAndBlockFilled() throws {
        let bitmap = PNGTestImages.gradient(width: 64, height: 64, format: .rgb8)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true, compressionLevel: 0))
            .encode(Image(bitmap: bitmap))
        let (previews, final) = try PNGTestDecoding.progressive(data, ends: Array(stride(from: 64, to: data.count, by: 64)))
        #expect(final.image.bitmap == bitmap)
        let passes = previews.compactMap { $0.userInfo[.scanNumberKey] as? Int }
        #expect(passes == Array(1...7), "uncompressed, fine-grained input yields one preview per pass")
        // After pass 1 every pixel shows its 8×8 block's top-left pixel.
        let first = try #require(previews.first).image.bitmap
        for y in 0..<64 {
            for x in 0..<64 {
                for c in 0..<3 {
                    #expect(first.sample(x: x, y: y, channel: c) == bitmap.sample(x: x & ~7, y: y & ~7, channel: c))
                }
            }
        }
    }

    @Test func oneChunkHoldingEveryPassYieldsAPreviewPerPassOnRepeatedCalls() throws {
        // 256×256 stored (level 0): every pass but the first spans more than one feed slice.
        let bitmap = PNGTestImages.gradient(width: 256, height: 256, format: .rgb8)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true, compressionLevel: 0))
            .encode(Image(bitmap: bitmap))
        let decoder = try #require(ImageDecoders.PNG(partiallyDownloadedData: data, context: ImageDecodingContext(data: data, isCompleted: false)))
        let partial = data.prefix(data.count - 12)  // everything but IEND
        var passes: [Int] = []
        while let preview = decoder.decodePartiallyDownloadedData(partial), passes.count < 20 {
            passes.append(try #require(preview.userInfo[.scanNumberKey] as? Int))
        }
        #expect(passes == Array(1...7))
        #expect(try decoder.decode(data).image.bitmap == bitmap)
    }

    @Test func nonInterlacedPreviewsShowDecodedRowsAndZeroBelow() throws {
        let bitmap = PNGTestImages.gradient(width: 40, height: 30, format: .rgba8)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 0)).encode(Image(bitmap: bitmap))
        let (previews, _) = try PNGTestDecoding.progressive(data, ends: Array(stride(from: 100, to: data.count, by: 300)))
        #expect(previews.count > 3)
        for preview in previews {
            let rows = try #require(preview.userInfo[.rowCountKey] as? Int)
            let image = preview.image.bitmap
            for y in 0..<30 {
                for x in 0..<40 {
                    for c in 0..<4 {
                        #expect(image.sample(x: x, y: y, channel: c) == (y < rows ? bitmap.sample(x: x, y: y, channel: c) : 0))
                    }
                }
            }
        }
    }

    @Test func noPreviewBeforeTheFirstRowsOrPass() throws {
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true))
            .encode(Image(bitmap: PNGTestImages.gradient(width: 64, height: 64, format: .rgb8)))
        let decoder = ImageDecoders.PNG()
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(8)) == nil)
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(40)) == nil)
    }

    @Test func dataThatDoesNotExtendTheFedBytesStartsOver() throws {
        let a = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 30, height: 20, format: .rgb8, seed: 1)))
        let b = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 30, height: 20, format: .rgb8, seed: 2)))
        let decoder = ImageDecoders.PNG()
        _ = decoder.decodePartiallyDownloadedData(a.prefix(a.count - 20))
        #expect(try decoder.decode(b).image == PNGTestDecoding.decode(b).image)
        // A shorter prefix than what was fed also starts over.
        _ = decoder.decodePartiallyDownloadedData(a)
        #expect(PNGTestDecoding.errorCode { _ = try decoder.decode(a.prefix(40)) } == .incomplete)
        #expect(try decoder.decode(a).image == PNGTestDecoding.decode(a).image)
    }

    @Test func partialCallsAfterAFailedCompleteDecodeShowNoUnwrittenPixels() throws {
        let bitmap = PNGTestImages.gradient(width: 64, height: 64, format: .rgba8)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: true)).encode(Image(bitmap: bitmap))
        let decoder = ImageDecoders.PNG()
        #expect(PNGTestDecoding.errorCode { _ = try decoder.decode(data.prefix(data.count / 3)) } == .incomplete)
        // That decode ended its libpng reader; more data starts a new one, whose previews
        // are made with the Adam7 block fill again.
        let preview = try #require(decoder.decodePartiallyDownloadedData(data.prefix(data.count - 20)))
        #expect(preview.isPreview)
        #expect(try decoder.decode(data).image.bitmap == bitmap)
    }

    @Test func truncatedDownloadIsIncompleteAfterPreviews() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 60, height: 40, format: .rgb8)))
        let decoder = ImageDecoders.PNG()
        _ = decoder.decodePartiallyDownloadedData(data.prefix(data.count / 2))
        let error = try #require(throws: ImageCodecError.self) { try decoder.decode(data.prefix(data.count * 3 / 4)) }
        #expect(error.code == .incomplete)
    }

    @Test func corruptDataMidStreamStopsPreviewsAndThrows() throws {
        var bytes = [UInt8](try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 0))
            .encode(Image(bitmap: PNGTestImages.gradient(width: 60, height: 40, format: .rgb8))))
        bytes[bytes.count / 2] ^= 0xFF  // breaks IDAT's CRC
        let data = Data(bytes)
        let decoder = ImageDecoders.PNG()
        _ = decoder.decodePartiallyDownloadedData(data.prefix(data.count / 3))
        #expect(decoder.decodePartiallyDownloadedData(data.prefix(data.count - 10)) == nil)
        #expect(PNGTestDecoding.errorCode { _ = try decoder.decode(data) } == .corrupt)
    }
}
