#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The Netpbm header hook, and the header the decoder reads: `P7` (PAM) with its fields up to
/// `ENDHDR`, or `P5`/`P6` (PGM/PPM) with width, height and maxval.
enum NetpbmHeaderParser {
    /// A parsed header.
    struct Header {
        var width: Int
        var height: Int
        /// Samples per pixel, 1…4.
        var depth: Int
        /// 255 or 65535.
        var maxval: Int
        /// Where the samples start.
        var samplesOffset: Int

        var pixelFormat: PixelFormat {
            PixelFormat(channels: [.gray, .grayAlpha, .rgb, .rgba][depth - 1], bitsPerChannel: maxval == 255 ? 8 : 16)
        }
    }

    /// The header hook: size and channels from the first bytes.
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        read(data).parseResult { header in
            ImageHeader(type: .netpbm, width: header.width, height: header.height, bitDepth: header.maxval == 255 ? 8 : 16,
                        componentCount: header.depth, hasAlpha: header.depth == 2 || header.depth == 4, frameCount: 1)
        }
    }

    /// Reads the header of the binary forms (`P5`, `P6`, `P7`).
    static func read(_ data: Data) -> HeaderRead<Header> {
        let bytes = [UInt8](data.prefix(4096))
        guard bytes.count >= 2 else { return bytes.isEmpty || bytes[0] == UInt8(ascii: "P") ? .needsMoreData : .corrupt("not a Netpbm file") }
        guard bytes[0] == UInt8(ascii: "P") else { return .corrupt("not a Netpbm file") }
        var index = 2
        /// The next white-space separated token, `nil` at the end of what arrived.
        func token() -> String? {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                } else if bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
                    index += 1
                } else { break }
            }
            let start = index
            while index < bytes.count, !(bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index])) { index += 1 }
            // A token that runs to the end of what arrived may go on.
            guard start < index, index < bytes.count else { return nil }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        func number() -> Int? { token().flatMap { Int($0) } }
        var width = 0, height = 0, depth = 0, maxval = 0
        switch bytes[1] {
        case UInt8(ascii: "7"):
            while true {
                guard let key = token() else { return data.count > 4096 ? .corrupt("a PAM header over 4 KiB") : .needsMoreData }
                if key == "ENDHDR" { break }
                switch key {
                case "WIDTH": width = number() ?? 0
                case "HEIGHT": height = number() ?? 0
                case "DEPTH": depth = number() ?? 0
                case "MAXVAL": maxval = number() ?? 0
                case "TUPLTYPE": _ = token()
                default: return .corrupt("unknown PAM header field \(key)")
                }
            }
        case UInt8(ascii: "5"), UInt8(ascii: "6"):
            depth = bytes[1] == UInt8(ascii: "5") ? 1 : 3
            guard let w = number(), let h = number(), let m = number() else { return .needsMoreData }
            (width, height, maxval) = (w, h, m)
        default:
            return .corrupt("unsupported Netpbm type P\(Character(UnicodeScalar(bytes[1])))")
        }
        guard width > 0, height > 0, (1...4).contains(depth), maxval == 255 || maxval == 65535 else {
            return .corrupt("unsupported header: \(width)×\(height) depth \(depth) maxval \(maxval)")
        }
        // The single white-space byte before the samples.
        return .header(Header(width: width, height: height, depth: depth, maxval: maxval, samplesOffset: index + 1))
    }
}
