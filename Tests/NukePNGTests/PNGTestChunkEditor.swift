import Foundation

/// Splits a PNG into its chunks and puts it back together, with correct CRCs, so that tests
/// can insert, change or repeat chunks.
struct PNGTestChunkEditor {
    struct Chunk {
        var type: String
        var data: [UInt8]
        /// When set, written instead of the correct CRC.
        var crc: UInt32?
    }

    var chunks: [Chunk]

    /// `nil` when `data` does not start with the PNG signature or a chunk runs past the end.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        var chunks: [Chunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(Self.uint32(bytes, at: offset))
            guard offset + 12 + length <= bytes.count else { return nil }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append(Chunk(type: type, data: Array(bytes[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
        self.chunks = chunks
    }

    /// The PNG: signature, then each chunk with its length and CRC.
    var data: Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        for chunk in chunks {
            let typed = Array(chunk.type.utf8) + chunk.data
            bytes += Self.bigEndian(UInt32(chunk.data.count)) + typed + Self.bigEndian(chunk.crc ?? Self.crc32(typed))
        }
        return Data(bytes)
    }

    /// The index of the first chunk of `type`.
    func index(of type: String) -> Int? {
        chunks.firstIndex { $0.type == type }
    }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 (ISO 3309, as PNG uses it), bit by bit.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
