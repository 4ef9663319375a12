import Foundation
import NukeConformance
import NukeCore
import NukePixels
@testable import NukePNG
import Testing

/// Decode to size: a non-interlaced PNG streams its rows through a small ring into the core's
/// resampler (the full-size image never exists); an interlaced one is decoded, then resized.
/// Either way the result equals a full decode resized by the same resampler.
@Suite struct PNGDecodeToSizeTests {
    static let cases: [(PixelFormat, Bool)] = [
        (.rgb8, false), (.rgba8, false), (.gray8, false), (.grayAlpha8, false), (.rgb16, false), (.rgba8, true),
    ]

    func decode(_ data: Data, target: ImageSize?, contentMode: ImageDecodingContext.ContentMode = .aspectFill,
                highBitDepth: Bool = false) throws -> ImageContainer {
        let context = ImageDecodingContext(data: data, targetSize: target, contentMode: contentMode, prefersHighBitDepth: highBitDepth)
        return try ImageDecoderRegistry(codecs: [.png]).decode(context)
    }

    @Test(arguments: cases)
    func equalsAFullDecodeResized(_ format: PixelFormat, _ interlaced: Bool) throws {
        // Tall enough that the ring (about 1 MiB of rows) wraps many times.
        let bitmap = PNGTestImages.gradient(width: 300, height: 2_500, format: format)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: interlaced)).encode(Image(bitmap: bitmap))
        let highBitDepth = format.bitsPerChannel == 16
        let full = try decode(data, target: nil, highBitDepth: highBitDepth).image.bitmap
        let target = ImageSize(width: 64, height: 64)
        let container = try decode(data, target: target, contentMode: .aspectFit, highBitDepth: highBitDepth)
        let exact = ImageSize(width: 300, height: 2_500).fitted(to: target, contentMode: .aspectFit)
        #expect(container.image.width == exact.width && container.image.height == exact.height)
        #expect(container.image.bitmap == full.resized(to: exact))
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 300, height: 2_500))
        #expect(container.userInfo[.decodeScaleKey] as? Double == Double(exact.width) / 300)
    }

    @Test func targetLargerThanTheImageKeepsItsSize() throws {
        let bitmap = PNGTestImages.gradient(width: 40, height: 30, format: .rgb8)
        let data = try ImageEncoders.PNG().encode(Image(bitmap: bitmap))
        let container = try decode(data, target: ImageSize(width: 400, height: 400))
        #expect(container.image.bitmap == bitmap)
        #expect(container.userInfo[.originalSizeKey] == nil)
    }

    @Test func truncatedFileStillFailsWhenDecodingToSize() throws {
        let bitmap = PNGTestImages.gradient(width: 300, height: 600, format: .rgb8)
        let data = try ImageEncoders.PNG().encode(Image(bitmap: bitmap))
        let error = try #require(throws: ImageCodecError.self) {
            try decode(data.prefix(data.count / 2), target: ImageSize(width: 32, height: 32))
        }
        #expect(error.code == .incomplete)
    }
}

/// ``ImageDecoderRegistry/decode(_:reading:)``: a file pushed in pieces without being kept
/// decodes exactly as the whole file does.
@Suite struct StreamedDecodeTests {
    static func pieces(of data: Data, size: Int) -> () -> Data? { data.pieces(ofSize: size) }

    @Test(arguments: [(false, 1), (false, 997), (true, 4096)])
    func streamedEqualsWhole(_ interlaced: Bool, _ pieceSize: Int) throws {
        let bitmap = PNGTestImages.gradient(width: 120, height: 90, format: .rgba8)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: interlaced)).encode(Image(bitmap: bitmap))
        let registry = ImageDecoderRegistry(codecs: [.png])
        for target in [nil, ImageSize(width: 30, height: 30)] {
            let whole = try registry.decode(ImageDecodingContext(data: data, targetSize: target))
            let read = Self.pieces(of: data.dropFirst(16), size: pieceSize)
            let streamed = try registry.decode(ImageDecodingContext(data: data.prefix(16), targetSize: target), reading: read)
            #expect(streamed.image.bitmap == whole.image.bitmap)
            #expect(!streamed.isPreview)
        }
    }

    @Test func truncatedStreamIsIncomplete() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 64, height: 64, format: .rgb8)))
        let registry = ImageDecoderRegistry(codecs: [.png])
        let read = Self.pieces(of: data.dropFirst(16).dropLast(40), size: 512)
        let error = try #require(throws: ImageCodecError.self) {
            try registry.decode(ImageDecodingContext(data: data.prefix(16)), reading: read)
        }
        #expect(error.code == .incomplete)
    }

    @Test func unknownFormatIsNoCodec() throws {
        let registry = ImageDecoderRegistry(codecs: [.png])
        let error = try #require(throws: ImageCodecError.self) {
            try registry.decode(ImageDecodingContext(data: Data("not an image at all".utf8)), reading: { nil })
        }
        #expect(error.code == .noCodec)
    }
}
