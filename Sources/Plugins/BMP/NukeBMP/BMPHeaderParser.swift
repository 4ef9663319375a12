#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The BMP header hook, and the headers the decoder reads: the 14-byte file header (`BM`, the
/// file size, which is not trusted, and the pixels' offset), then the DIB header
/// (``BMPHeader``).
enum BMPHeaderParser {
    /// The header hook: size and channels from the first bytes.
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        data.prefix(4096).withUnsafeBytes { read($0) }.parseResult { header in
            ImageHeader(type: .bmp, width: header.width, height: header.height, bitDepth: 8, componentCount: header.pixelFormat.channelCount,
                        hasAlpha: header.pixelFormat.hasAlpha, frameCount: 1)
        }
    }

    /// Reads the file header and the DIB header of the whole file (or its first bytes).
    static func read(_ bytes: UnsafeRawBufferPointer) -> HeaderRead<BMPHeader> {
        guard bytes.count >= 2 else { return .needsMoreData }
        guard bytes[0] == UInt8(ascii: "B"), bytes[1] == UInt8(ascii: "M") else {
            if let kind = String(bytes: bytes[0..<2], encoding: .isoLatin1), ["BA", "CI", "CP", "IC", "PT"].contains(kind) {
                return .invalid(.unsupported, "OS/2 \(kind) bitmap arrays and icons are not supported")
            }
            return .invalid(.corrupt, "not a BMP file (no BM signature)")
        }
        guard bytes.count >= 18 else { return .needsMoreData }
        let offset = Int(bytes.le32(10))
        return BMPHeader.read(bytes, dibOffset: 14, end: bytes.count, fileOffset: offset)
    }
}
