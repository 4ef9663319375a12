import Foundation
import Testing
import NukeCore

/// The file sink for streaming encoders (`FileOutputStream`).
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

    /// Bytes written before are written over where they are: still in the buffer, or already
    /// in the file (after a large write went past the buffer), from a descriptor that did not
    /// start at offset 0; a pipe cannot be written over.
    @Test func fileStreamOverwritesEarlierBytes() throws {
        let path = Self.temporaryPath("overwrite")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        _ = "before".withCString { write(fd, $0, 6) }
        let stream = FileOutputStream(fileDescriptor: fd, path: path, closesOnDeinit: false)
        var expected = [UInt8]((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try expected[0..<10].withUnsafeBytes { try stream.write($0) }
        try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try stream.overwrite($0, at: 2) }  // in the buffer
        try expected[10...].withUnsafeBytes { try stream.write($0) }
        try [UInt8](repeating: 2, count: 3).withUnsafeBytes { try stream.overwrite($0, at: 0) }  // in the file
        try [UInt8](repeating: 3, count: 5).withUnsafeBytes { try stream.overwrite($0, at: 99_995) }
        expected.replaceSubrange(2..<6, with: [1, 1, 1, 1])
        expected.replaceSubrange(0..<3, with: [2, 2, 2])
        expected.replaceSubrange(99_995..<100_000, with: [3, 3, 3, 3, 3])
        #expect(stream.position == 100_000)
        try stream.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("before".utf8) + Data(expected))

        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        let piped = FileOutputStream(fileDescriptor: pipeEnds[1], path: "a pipe", closesOnDeinit: false)
        // 60,000 bytes reach the pipe (under its 64 KiB) when the next write flushes them.
        try [UInt8](repeating: 0, count: 60_000).withUnsafeBytes { try piped.write($0) }
        try [UInt8](repeating: 0, count: 10_000).withUnsafeBytes { try piped.write($0) }
        let error = #expect(throws: FileOutputStreamError.self) {
            try [UInt8](repeating: 1, count: 4).withUnsafeBytes { try piped.overwrite($0, at: 0) }
        }
        #expect(error?.code == ESPIPE)
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
