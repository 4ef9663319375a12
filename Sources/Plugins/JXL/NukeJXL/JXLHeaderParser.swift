#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Reads a JPEG XL's size from its codestream's `SizeHeader` without libjxl.
///
/// A file is a bare codestream (`FF 0A`, then the headers) or the ISO BMFF-style container: the
/// `JXL ` signature box, then boxes of which `jxlc` holds the codestream (or `jxlp` boxes hold it
/// in parts, each after a 4-byte index). The `SizeHeader` (ISO/IEC 18181-1, A.2) follows the
/// codestream's signature, read least significant bit first: `small` (1 bit); when small,
/// `height / 8 − 1` in 5 bits, else `height − 1` as a U32 (a 2-bit selector then 9, 13, 18 or 30
/// bits); a 3-bit aspect ratio; when it is 0, the width as the height was written, else the
/// width is the height times 1, 12/10, 4/3, 3/2, 16/9, 5/4 or 2.
enum JXLHeaderParser {
    static let containerSignature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// `true` when `data` starts with either signature.
    static func hasSignature(_ data: Data) -> Bool {
        let bytes = [UInt8](data.prefix(12))
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0x0A { return true }
        return bytes.count == 12 && bytes == containerSignature
    }

    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        let head = [UInt8](data.prefix(2))
        if head.count == 2, head[0] == 0xFF, head[1] == 0x0A {
            return parseCodestream([UInt8](data.prefix(16)).dropFirst(2))
        }
        let bytes = [UInt8](data.prefix(12))
        guard containerSignature.starts(with: bytes) else { return .unavailable }
        guard bytes.count == 12 else { return .needsMoreData }
        // Walk the boxes to the first codestream bytes (at most 64 boxes, as a guard).
        var offset = 12
        for _ in 0..<64 {
            let box = [UInt8](data.dropFirst(offset).prefix(16))
            guard box.count >= 8 else { return .needsMoreData }
            var size = box[0..<4].reduce(0) { $0 << 8 | Int($1) }
            var header = 8
            if size == 1 {
                guard box.count >= 16 else { return .needsMoreData }
                let large = box[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(Int.max / 2) else { return .unavailable }
                size = Int(large)
                header = 16
            }
            let type = String(decoding: box[4..<8], as: UTF8.self)
            if type == "jxlc" || type == "jxlp" {
                let start = offset + header + (type == "jxlp" ? 4 : 0)
                let stream = [UInt8](data.dropFirst(start).prefix(16))
                guard stream.count >= 2 else { return .needsMoreData }
                guard stream[0] == 0xFF, stream[1] == 0x0A else { return .unavailable }
                return parseCodestream(stream.dropFirst(2))
            }
            guard size == 0 || size >= header else { return .unavailable }
            if size == 0 { return .unavailable }  // the last box, and no codestream before it
            offset += size
        }
        return .unavailable
    }

    /// The size from the `SizeHeader` at the start of `bytes`; `.needsMoreData` when they end first.
    private static func parseCodestream(_ bytes: ArraySlice<UInt8>) -> ImageHeader.ParseResult {
        var reader = BitReader(bytes: Array(bytes))
        guard let size = readSize(&reader) else { return .needsMoreData }
        guard size.width > 0, size.height > 0 else { return .unavailable }
        return .parsed(ImageHeader(type: .jxl, width: size.width, height: size.height))
    }

    static func readSize(_ reader: inout BitReader) -> (width: Int, height: Int)? {
        guard let small = reader.read(1) else { return nil }
        func dimension() -> Int? {
            if small == 1 { return reader.read(5).map { ($0 + 1) * 8 } }
            guard let selector = reader.read(2) else { return nil }
            return reader.read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let height = dimension(), let ratio = reader.read(3) else { return nil }
        let ratios = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
        if ratio == 0 {
            guard let width = dimension() else { return nil }
            return (width, height)
        }
        let (num, den) = ratios[ratio - 1]
        return (height * num / den, height)
    }

    /// Reads bits least significant first.
    struct BitReader {
        let bytes: [UInt8]
        var position = 0

        mutating func read(_ count: Int) -> Int? {
            guard position + count <= bytes.count * 8 else { return nil }
            var value = 0
            for i in 0..<count {
                let bit = Int(bytes[(position + i) >> 3] >> UInt8((position + i) & 7)) & 1
                value |= bit << i
            }
            position += count
            return value
        }
    }
}
