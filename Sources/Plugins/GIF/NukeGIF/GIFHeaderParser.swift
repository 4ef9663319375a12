#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// The GIF header hook: the logical screen size from the first 10 bytes.
enum GIFHeaderParser {
    /// Reads the logical screen descriptor, in pure Swift.
    ///
    /// - Returns: `.parsed` with the screen size, `.needsMoreData` before 10 bytes,
    ///   `.unavailable` for data that is not a GIF or declares a zero-size screen.
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        let bytes = [UInt8](data.prefix(10))
        let signature = Array(bytes.prefix(6))
        guard Array("GIF87a".utf8).starts(with: signature) || Array("GIF89a".utf8).starts(with: signature) else {
            return .unavailable
        }
        guard bytes.count >= 10 else { return .needsMoreData }
        let width = Int(bytes[6]) | Int(bytes[7]) << 8
        let height = Int(bytes[8]) | Int(bytes[9]) << 8
        guard width > 0, height > 0 else { return .unavailable }
        return .parsed(ImageHeader(type: .gif, width: width, height: height, bitDepth: 8, componentCount: 1))
    }

}
