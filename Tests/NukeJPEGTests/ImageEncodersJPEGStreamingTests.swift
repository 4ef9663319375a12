import Foundation
import NukeCore
import NukePixels
import Testing
import NukeJPEG

/// ``ImageEncoders/JPEG/encode(_:to:)``: the file arrives in pieces, as it is compressed.
@Suite("ImageEncoders.JPEG streaming")
struct ImageEncodersJPEGStreamingTests {
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

    /// A noisy 1024 × 768 image: about 1 MB of JPEG at quality 0.95, far more than one output buffer.
    static let noise: Bitmap = {
        var state: UInt32 = 12345
        return Bitmap(width: 1024, height: 768, pixelFormat: .rgb8) { bytes in
            for i in 0..<bytes.count {
                state = state &* 1_664_525 &+ 1_013_904_223
                let gradient: Int = (i / 3 % 1024) / 4
                let jitter = Int(state >> 27)
                bytes[i] = UInt8(truncatingIfNeeded: gradient + jitter)
            }
        }
    }()

    @Test(arguments: [PixelFormat.rgb8, .rgba8, .gray8, .rgb16], [false, true])
    func streamingEqualsEncodeByteForByte(_ format: PixelFormat, progressive: Bool) throws {
        let image = Image(bitmap: Self.noise.converted(to: format))
        let encoder = ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.95, isProgressive: progressive))
        var stream = RecordingStream()
        try encoder.encode(image, to: &stream)
        let data = try encoder.encode(image)
        #expect(stream.joined == data)
        #expect(data.starts(with: [0xFF, 0xD8]))
        #expect(data.suffix(2) == Data([0xFF, 0xD9]))
        if !progressive {
            // Baseline output comes out batch by batch, never the whole file at once.
            #expect(stream.pieces.count > 10)
            #expect(stream.pieces.map(\.count).max() ?? 0 < data.count / 4)
        }
    }

    @Test(arguments: [0, 100, 300_000])
    func aFailingStreamStopsTheEncoder(_ limit: Int) {
        let image = Image(bitmap: Self.noise)
        var stream = FailingStream(limit: limit)
        #expect(throws: FailingStream.Full()) {
            try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.95)).encode(image, to: &stream)
        }
        #expect(stream.written > limit)
    }

    @Test func theSharedRegistryStreams() throws {
        let image = Image(bitmap: Self.noise)
        var stream = RecordingStream()
        try ImageEncoderRegistry.shared.encode(image, as: .jpeg, to: &stream)
        #expect(stream.pieces.count > 1)
        #expect(stream.joined == (try ImageEncoderRegistry.shared.encode(image, as: .jpeg)))
    }
}
