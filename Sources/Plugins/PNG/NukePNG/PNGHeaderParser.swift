#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// The PNG header hook.
enum PNGHeaderParser {
    /// Reads the PNG `IHDR` chunk, and an APNG `acTL` chunk when the chunks before the first
    /// `IDAT` have arrived.
    /// The PNG codec's header hook.
    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        guard PNGPlugin.hasSignature(data) else { return data.count < 8 ? .needsMoreData : .unavailable }
        return data.withUnsafeBytes { raw in parse(ImageHeader.Reader(raw.bindMemory(to: UInt8.self))) }
    }

    static func parse(_ b: ImageHeader.Reader) -> ImageHeader.ParseResult {
        guard b.count >= 33 else { return .needsMoreData }
        guard b.u32be(8) == 13, b.fourCC(12, "IHDR"),
              let width = b.u32be(16), let height = b.u32be(20),
              let depth = b.u8(24), let colorType = b.u8(25), let interlace = b.u8(28) else { return .unavailable }
        guard width > 0, height > 0 else { return .unavailable }
        let components: Int
        switch colorType {
        case 0: components = 1
        case 2: components = 3
        case 3: components = 1
        case 4: components = 2
        case 6: components = 4
        default: return .unavailable
        }
        var header = ImageHeader(
            type: .png, width: width, height: height, bitDepth: depth, componentCount: components,
            hasAlpha: colorType == 4 || colorType == 6 ? true : nil, isProgressive: interlace == 1
        )
        // Chunks up to the first IDAT: acTL (animation) and tRNS (alpha) are cheap to see.
        var sawImageData = false
        for chunk in PNGChunks(b, from: 33) where chunk.isComplete(in: b.count) {
            if chunk.is("acTL"), let frames = b.u32be(chunk.payload.lowerBound) {
                header.frameCount = frames
                header.isAnimated = frames > 1
            } else if chunk.is("tRNS") {
                header.hasAlpha = true
            } else if chunk.is("IDAT") {
                sawImageData = true
                break
            }
        }
        if sawImageData {
            if header.frameCount == nil { header.frameCount = 1 }
            if header.hasAlpha == nil { header.hasAlpha = false }
        }
        return .parsed(header)
    }
}
