import Foundation
import NukeConformance
import NukeCore
import Testing
@testable import NukeJPEG

/// Collects the rows a sink receives into one packed buffer.
final class RowCollector: ImageRowSink {
    var layout: (width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode)?
    var bytes: [UInt8] = []
    var batches = 0
    var largestBatch = 0
    /// Throws from `write` after this many batches.
    var failAfter: Int?

    func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError) {
        precondition(layout == nil, "begin twice")
        layout = (width, height, pixelFormat, alphaMode)
    }

    func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError) {
        if let failAfter, batches >= failAfter { throw ImageCodecError(.internalFailure, stage: .decoding, message: "the sink is full") }
        guard let layout else { preconditionFailure("write before begin") }
        let rowBytes = layout.width * layout.pixelFormat.bytesPerPixel
        for y in 0..<count { bytes += rows[(y * bytesPerRow)..<(y * bytesPerRow + rowBytes)] }
        batches += 1
        largestBatch = max(largestBatch, count)
    }

    var bitmap: Bitmap? {
        guard let layout else { return nil }
        return Bitmap(width: layout.width, height: layout.height, pixelFormat: layout.pixelFormat, alphaMode: layout.alphaMode) { buffer in
            buffer.copyBytes(from: bytes)
        }
    }
}

@Suite("Row sinks: a decode's rows handed over as they are produced")
struct JPEGRowSinkTests {
    static func pieces(of data: Data, size: Int) -> () -> Data? { data.pieces(ofSize: size) }

    @Test("JPEG rows reach the sink in bands equal to the decoded bitmap, whole or read in pieces", arguments: [
        "baseline-420.jpg", "baseline-444.jpg", "grayscale.jpg", "cmyk-adobe.jpg", "progressive.jpg",
        "progressive-many-scans.jpg", "arithmetic.jpg", "restart-rows.jpg",
    ])
    func jpegStreams(_ name: String) throws {
        let data = try JPEGFixtures.data(name)
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        let expected = try registry.decode(ImageDecodingContext(data: data)).image.bitmap
        for pieceSize in [data.count, 701] {
            let sink = RowCollector()
            let container = try registry.decode(
                ImageDecodingContext(data: data.prefix(min(pieceSize, 64))), reading: Self.pieces(of: data.dropFirst(min(pieceSize, 64)), size: pieceSize), rowsTo: sink
            )
            #expect(container.image.bitmap.width == 0, "the decoder took the sink: no image is kept")
            #expect(container.type == .jpeg)
            #expect(sink.bitmap == expected, "\(name) in pieces of \(pieceSize)")
        }
        // All of it as the first piece: decoded in one pass from the caller's bytes.
        let sink = RowCollector()
        _ = try registry.decode(ImageDecodingContext(data: data), reading: { nil }, rowsTo: sink)
        #expect(sink.bitmap == expected, "\(name) in one piece")
    }

    @Test("a large JPEG goes through in bands, never as a whole image")
    func bands() throws {
        let pixels = Bitmap(width: 640, height: 900, pixelFormat: .rgb8, alphaMode: AlphaMode.none) { buffer in
            for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i &* 31 >> 7) }
        }
        let data = try ImageEncoders.JPEG().encode(Image(bitmap: pixels))
        let sink = RowCollector()
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        _ = try registry.decode(ImageDecodingContext(data: data.prefix(32)), reading: Self.pieces(of: data.dropFirst(32), size: 4096), rowsTo: sink)
        #expect(sink.bitmap == (try registry.decode(ImageDecodingContext(data: data)).image.bitmap))
        #expect(sink.batches > 1)
        #expect(sink.largestBatch * 640 * 3 <= 1 << 20 || sink.largestBatch == 16)
    }

    @Test("with a target size JPEG declines the sink: the registry hands over the shrunk bitmap's rows and the container keeps it")
    func targetSizeFallsBack() throws {
        let data = try JPEGFixtures.data("baseline-420.jpg")
        let sink = RowCollector()
        let context = ImageDecodingContext(data: data.prefix(64), targetSize: ImageSize(width: 40, height: 40))
        let container = try ImageDecoderRegistry(codecs: [.jpeg]).decode(context, reading: Self.pieces(of: data.dropFirst(64), size: 512), rowsTo: sink)
        #expect(container.image.bitmap.width > 0)
        #expect(sink.bitmap == container.image.bitmap)
    }

    @Test("an error from the sink ends the decode and reaches the caller")
    func sinkErrors() throws {
        let pixels = Bitmap(width: 300, height: 4000, pixelFormat: .gray8, alphaMode: AlphaMode.none) { buffer in
            for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i) }
        }
        let data = try ImageEncoders.JPEG().encode(Image(bitmap: pixels))
        let sink = RowCollector()
        sink.failAfter = 1
        let error = try #require(throws: ImageCodecError.self) {
            try ImageDecoderRegistry(codecs: [.jpeg]).decode(ImageDecodingContext(data: data), reading: { nil }, rowsTo: sink)
        }
        #expect(error.message.contains("the sink is full"))
        #expect(sink.batches == 1)
    }

    @Test("damaged data fails as without a sink")
    func damaged() throws {
        let data = try JPEGFixtures.data("truncated-half.jpg")
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        let plain = try #require(throws: ImageCodecError.self) { try registry.decode(ImageDecodingContext(data: data.prefix(64)), reading: Self.pieces(of: data.dropFirst(64), size: 300)) }
        let sunk = try #require(throws: ImageCodecError.self) {
            try registry.decode(ImageDecodingContext(data: data.prefix(64)), reading: Self.pieces(of: data.dropFirst(64), size: 300), rowsTo: RowCollector())
        }
        #expect(sunk.code == plain.code)
    }
}
