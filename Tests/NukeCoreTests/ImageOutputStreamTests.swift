import Foundation
import NukeCore
import Testing

/// ``ImageOutputStream``: the `Data` sink and the default ``ImageEncoding/encode(_:to:)``.
@Suite struct ImageOutputStreamTests {
    /// An encoder with only `encode(_:) -> Data`, as a third-party one written before streaming.
    struct DataOnlyEncoder: ImageEncoding {
        func encode(_ image: Image) throws -> Data {
            Data("\(image.width)x\(image.height)".utf8)
        }
    }

    /// A stream that fails once `limit` bytes have been written.
    struct FailingStream: ImageOutputStream {
        struct Full: Error, Equatable {}
        var limit: Int
        var written = 0
        mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
            written += bytes.count
            if written > limit { throw Full() }
        }
    }

    private static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("nuke-stream-\(UInt64.random(in: 0...UInt64.max))-\(name)").path
    }

    @Test func defaultStreamingEncodeWritesTheEncodedData() throws {
        let image = Image(bitmap: Bitmap(width: 3, height: 2, pixelFormat: .gray8, bytes: [UInt8](repeating: 0, count: 6)))
        var stream = DataOutputStream()
        try DataOnlyEncoder().encode(image, to: &stream)
        #expect(stream.data == Data("3x2".utf8))

        var failing = FailingStream(limit: 1)
        #expect(throws: FailingStream.Full()) { try DataOnlyEncoder().encode(image, to: &failing) }
    }

    @Test func bitmapRowsCopiesARange() {
        let bitmap = Bitmap(width: 2, height: 4, pixelFormat: .gray8, bytesPerRow: 3, bytes: Array(0..<12))
        let middle = bitmap.rows(1..<3)
        #expect(middle.height == 2)
        #expect(middle.bytesPerRow == 3)
        #expect(middle.row(0) == [3, 4])
        #expect(middle.row(1) == [6, 7])
    }
}
