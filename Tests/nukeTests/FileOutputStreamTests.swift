import Foundation
import Testing
@testable import nuke

/// The CLI's file sink for streaming encoders (`FileOutputStream`).
@Suite struct FileOutputStreamTests {
    private static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("nuke-stream-\(UInt64.random(in: 0...UInt64.max))-\(name)").path
    }

    @Test(arguments: [0, 10, 65_535, 65_536, 65_537, 200_000])
    func fileStreamWritesEveryByteInOrder(_ pieceSize: Int) throws {
        let path = Self.temporaryPath("pieces")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var expected = Data()
        let stream = try FileOutputStream(path: path)
        for piece in 0..<5 {
            let bytes = (0..<(pieceSize + piece)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ piece) }
            expected.append(contentsOf: bytes)
            try bytes.withUnsafeBytes { try stream.write($0) }
        }
        #expect(stream.bytesWritten == expected.count)
        try stream.close()
        try stream.close()  // a second close does nothing
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == expected)
    }

    @Test func fileStreamReportsTheFailedCall() throws {
        let missing = Self.temporaryPath("no-such-dir") + "/file"
        let error = #expect(throws: FileOutputStreamError.self) { try FileOutputStream(path: missing) }
        #expect(error?.operation == "open")
        #expect(error?.code == ENOENT)
        #expect(error?.description.contains(missing) == true)

        let path = Self.temporaryPath("exclusive")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileOutputStream(path: path).close()
        #expect(throws: FileOutputStreamError.self) { try FileOutputStream(path: path, exclusive: true) }
    }
}
