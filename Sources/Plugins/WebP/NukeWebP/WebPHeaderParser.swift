#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Reads a WebP's size from its first chunk without libwebp.
enum WebPHeaderParser {
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        let bytes = [UInt8](data.prefix(30))
        let riff = Array("RIFF".utf8), webp = Array("WEBP".utf8)
        guard riff.starts(with: bytes.prefix(4)) else { return .unavailable }
        if bytes.count > 8, !webp.starts(with: bytes[8...].prefix(4)) { return .unavailable }
        guard bytes.count >= 20 else { return .needsMoreData }
        func le(_ at: Int, _ count: Int) -> Int {
            (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        let fourCC = String(decoding: bytes[12..<16], as: UTF8.self)
        switch fourCC {
        case "VP8X":
            guard bytes.count >= 30 else { return .needsMoreData }
            let flags = bytes[20]
            let animated = flags & 0x02 != 0
            return .parsed(ImageHeader(
                type: .webp, width: le(24, 3) + 1, height: le(27, 3) + 1, bitDepth: 8,
                componentCount: flags & 0x10 != 0 || animated ? 4 : 3, hasAlpha: flags & 0x10 != 0 || animated, isAnimated: animated
            ))
        case "VP8 ":
            // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
            guard bytes.count >= 30 else { return .needsMoreData }
            guard bytes[23] == 0x9d, bytes[24] == 0x01, bytes[25] == 0x2a else { return .unavailable }
            let width = le(26, 2) & 0x3fff, height = le(28, 2) & 0x3fff
            guard width > 0, height > 0 else { return .unavailable }
            return .parsed(ImageHeader(type: .webp, width: width, height: height, bitDepth: 8, componentCount: 3, hasAlpha: false))
        case "VP8L":
            // Signature 0x2f, then 14 bits width − 1, 14 bits height − 1, 1 bit alpha.
            guard bytes.count >= 25 else { return .needsMoreData }
            guard bytes[20] == 0x2f else { return .unavailable }
            let bits = le(21, 4)
            let alpha = (bits >> 28) & 1 != 0
            return .parsed(ImageHeader(
                type: .webp, width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1, bitDepth: 8,
                componentCount: alpha ? 4 : 3, hasAlpha: alpha
            ))
        default:
            return .unavailable
        }
    }
}
