import NukeCore
import NukePluginKit

/// The one walk over a PNG's chunks in Swift, by their lengths: the header hook, the animation
/// scan of a download and the APNG structure all read the file through it. (The shim's C
/// walker, which checks lengths and CRCs before libpng buffers a chunk, is libpng's side.)
///
/// It yields a chunk as soon as its 8-byte head (length and type) has arrived, so a reader
/// deciding by types need not wait for a payload; ``PNGChunk/isComplete(in:)`` says whether the
/// payload and CRC are there too. The walk stops at the first chunk head that has not arrived, or
/// at a length over 2³¹ − 1 (``isBroken``).
struct PNGChunks: Sequence, IteratorProtocol {
    private let bytes: ImageHeader.Reader
    /// Where the next chunk starts: after the last one yielded.
    private(set) var position: Int
    /// The walk stopped at a length the format does not allow.
    private(set) var isBroken = false

    /// Walks `bytes` from `position`: 8, just after the signature, or where an earlier walk over
    /// a prefix of the same data stopped.
    init(_ bytes: ImageHeader.Reader, from position: Int = 8) {
        self.bytes = bytes
        self.position = position
    }

    mutating func next() -> PNGChunk? {
        guard !isBroken, let length = bytes.u32be(position), let type = bytes.u32be(position + 4) else { return nil }
        guard length <= Int(Int32.max) else {
            isBroken = true
            return nil
        }
        let chunk = PNGChunk(offset: position, length: length, type: UInt32(type))
        position = chunk.end
        return chunk
    }
}

/// One chunk of a PNG: where it is and what it is.
struct PNGChunk {
    /// The offset of its length field.
    let offset: Int
    /// The payload's length.
    let length: Int
    /// The type, as its four bytes read big-endian (``PNGChunk/type(_:)``).
    let type: UInt32

    /// The payload's bytes.
    var payload: Range<Int> { (offset + 8)..<(offset + 8 + length) }
    /// Just after its CRC: where the next chunk starts.
    var end: Int { offset + 12 + length }
    /// The chunk, from its length field to its CRC.
    var whole: Range<Int> { offset..<end }

    /// Whether the payload and CRC are within the first `count` bytes.
    func isComplete(in count: Int) -> Bool { end <= count }

    /// The type's four letters, such as `"IDAT"`.
    var name: String {
        String(decoding: [UInt8(type >> 24), UInt8(type >> 16 & 0xFF), UInt8(type >> 8 & 0xFF), UInt8(type & 0xFF)], as: UTF8.self)
    }

    /// `true` when the type is `code` (four ASCII letters).
    func `is`(_ code: StaticString) -> Bool { type == Self.type(code) }

    /// A type code as the walk reads it: `type("IDAT")`.
    static func type(_ code: StaticString) -> UInt32 {
        code.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
