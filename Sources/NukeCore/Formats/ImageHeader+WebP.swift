import Foundation

extension ImageHeader {
    /// Reads the first chunk of a WebP file: `VP8 ` (lossy), `VP8L` (lossless) or `VP8X`
    /// (extended: canvas size, alpha and animation flags).
    static func parseWebP(_ b: Reader) -> ParseResult {
        guard b.count >= 30 else { return .needsMoreData }
        if b.fourCC(12, "VP8 ") {
            // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height.
            guard b.u8(23) == 0x9D, b.u8(24) == 0x01, b.u8(25) == 0x2A,
                  let w = b.u16le(26), let h = b.u16le(28) else { return .unavailable }
            let width = w & 0x3FFF, height = h & 0x3FFF
            guard width > 0, height > 0 else { return .unavailable }
            return .parsed(ImageHeader(type: .webp, width: width, height: height, bitDepth: 8, componentCount: 3,
                                       hasAlpha: false, frameCount: 1))
        }
        if b.fourCC(12, "VP8L") {
            guard b.u8(20) == 0x2F, let b0 = b.u8(21), let b1 = b.u8(22), let b2 = b.u8(23), let b3 = b.u8(24) else {
                return .unavailable
            }
            let bits = b0 | b1 << 8 | b2 << 16 | b3 << 24
            let width = (bits & 0x3FFF) + 1
            let height = ((bits >> 14) & 0x3FFF) + 1
            let alpha = (bits >> 28) & 1 == 1
            return .parsed(ImageHeader(type: .webp, width: width, height: height, bitDepth: 8,
                                       componentCount: alpha ? 4 : 3, hasAlpha: alpha, frameCount: 1))
        }
        if b.fourCC(12, "VP8X") {
            guard let flags = b.u8(20), let w = b.u24le(24), let h = b.u24le(27) else { return .unavailable }
            let animated = flags & 0x02 != 0
            let alpha = flags & 0x10 != 0
            return .parsed(ImageHeader(type: .webp, width: w + 1, height: h + 1, bitDepth: 8,
                                       componentCount: alpha ? 4 : 3, hasAlpha: alpha,
                                       frameCount: animated ? nil : 1, isAnimated: animated))
        }
        return .unavailable
    }
}
