#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CNukeIsolation
import NukeCore

/// One message between the host and a helper: a kind byte, a 32-bit length, the payload.
///
/// Integers are little-endian; strings and byte blocks carry a 64-bit length. A helper's decoder
/// asks for pixel memory with `.allocate`; the host answers `.buffer` (its id and capacity),
/// followed by one byte carrying the buffer's descriptor. A preview or final image names the
/// buffer its pixels lie in (``SharedPixelBuffers``).
struct WireMessage {
    enum Kind: UInt8 {
        // Host → helper.
        case start = 1, push = 2, finish = 3, next = 4, end = 5, frame = 7, warmUp = 8, buffer = 9
        // Helper → host.
        case ready = 10, needsMoreData = 11, header = 12, preview = 13, final = 14, failure = 15, allocate = 16
        // Host → zygote (``HelperZygote``), and its answers.
        case fork = 20, wait = 21, forked = 22, waited = 23
    }

    var kind: Kind
    var payload: Data

    init(_ kind: Kind, _ payload: Data = Data()) {
        self.kind = kind
        self.payload = payload
    }

    /// Sends the message (kind, length, payload) on `socket`, the payload without a copy;
    /// returns 0 or -errno.
    func write(to socket: Int32) -> Int32 {
        payload.withUnsafeBytes { nukeiso_write_message(socket, kind.rawValue, $0.baseAddress, $0.count) }
    }
}

/// Writes a message payload.
struct WireWriter {
    private(set) var data = Data()

    mutating func int(_ value: Int) {
        withUnsafeBytes(of: Int64(value).littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func bool(_ value: Bool) { data.append(value ? 1 : 0) }

    mutating func bytes(_ value: Data?) {
        guard let value else {
            int(-1)
            return
        }
        int(value.count)
        data.append(value)
    }

    mutating func string(_ value: String?) { bytes(value.map { Data($0.utf8) }) }
}

/// Reads a message payload; a malformed one throws.
struct WireReader {
    private let data: Data
    private var offset: Int

    init(_ data: Data) {
        self.data = data
        self.offset = data.startIndex
    }

    /// What was wrong with a message.
    struct Malformed: Error {
        var reason: String

        init(_ reason: String = "a malformed message") {
            self.reason = reason
        }
    }

    mutating func int() throws(Malformed) -> Int {
        guard offset + 8 <= data.endIndex else { throw Malformed() }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(data[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return Int(Int64(bitPattern: value))
    }

    mutating func double() throws(Malformed) -> Double {
        Double(bitPattern: UInt64(bitPattern: Int64(try int())))
    }

    mutating func bool() throws(Malformed) -> Bool {
        guard offset < data.endIndex else { throw Malformed() }
        defer { offset += 1 }
        return data[offset] != 0
    }

    mutating func bytes() throws(Malformed) -> Data? {
        let count = try int()
        if count < 0 { return nil }
        guard count <= data.endIndex - offset else { throw Malformed() }
        defer { offset += count }
        return Data(data[offset..<(offset + count)])
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset >= data.endIndex }

    mutating func string() throws(Malformed) -> String? {
        try bytes().map { String(decoding: $0, as: UTF8.self) }
    }
}
