import Foundation

extension ImageHeader {
    /// Reads the GIF logical screen descriptor.
    static func parseGIF(_ b: Reader) -> ParseResult {
        guard let width = b.u16le(6), let height = b.u16le(8) else { return .needsMoreData }
        guard width > 0, height > 0 else { return .unavailable }
        return .parsed(ImageHeader(type: .gif, width: width, height: height, bitDepth: 8, componentCount: 1))
    }
}
