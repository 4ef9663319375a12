import Foundation
import NukeCore
import Testing
@testable import NukePNG

/// ``ImageEncoders/PNG/encode(_:to:)``: the file arrives in pieces, as it is compressed.
@Suite struct ImageEncodersPNGStreamingTests {
    /// Records each write.
    struct RecordingStream: ImageOutputStream {
        var pieces: [Data] = []
        mutating func write(_ bytes: UnsafeRawBufferPointer) {
            pieces.append(Data(bytes))
        }
        var joined: Data { pieces.reduce(into: Data()) { $0 += $1 } }
    }

    /// Fails once more than `limit` bytes were written.
    struct FailingStream: ImageOutputStream {
        struct Full: Error, Equatable {}
        var limit: Int
        var written = 0
        mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
            written += bytes.count
            if written > limit { throw Full() }
        }
    }

    static func image(_ format: PixelFormat, premultiplied: Bool = false) -> Image {
        var bitmap = PNGTestImages.gradient(width: 512, height: 300, format: format)
        if premultiplied { bitmap = bitmap.premultiplied() }
        return Image(bitmap: bitmap)
    }

    @Test(arguments: [PixelFormat.rgb8, .rgba8, .gray16, .rgba16], [false, true])
    func streamingEqualsEncodeByteForByte(_ format: PixelFormat, interlaced: Bool) throws {
        let image = Self.image(format)
        let encoder = ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: interlaced))
        var stream = RecordingStream()
        try encoder.encode(image, to: &stream)
        let data = try encoder.encode(image)
        #expect(stream.joined == data)
        #expect(stream.pieces.count > 2)
        #expect(stream.pieces.map(\.count).max() ?? 0 < data.count / 2)
        #expect(try PNGTestDecoding.decode(data, highBitDepth: true).image.bitmap == image.bitmap)
    }

    @Test(arguments: [false, true])
    func premultipliedRowsAreUnpremultipliedBatchByBatch(_ interlaced: Bool) throws {
        let image = Self.image(.rgba8, premultiplied: true)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: interlaced)).encode(image)
        #expect(try PNGTestDecoding.decode(data).image.bitmap == image.bitmap.unpremultiplied())
    }

    @Test(arguments: [0, 100, 20_000])
    func aFailingStreamStopsTheEncoder(_ limit: Int) {
        var stream = FailingStream(limit: limit)
        #expect(throws: FailingStream.Full()) {
            try ImageEncoders.PNG().encode(Self.image(.rgba16), to: &stream)
        }
        #expect(stream.written > limit)
    }
}
