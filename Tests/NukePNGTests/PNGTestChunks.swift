import Foundation
import NukeCore

/// What a PNG's chunks say, read independently of libpng.
struct PNGTestChunks {
    var colorType: Int
    var bitDepth: Int
    var isInterlaced: Bool
    var hasTRNS: Bool

    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 33 else { return nil }
        colorType = Int(bytes[25])
        bitDepth = Int(bytes[24])
        isInterlaced = bytes[28] != 0
        hasTRNS = false
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual("tRNS".utf8) { hasTRNS = true }
            offset += 12 + length
        }
    }

    /// The channels the decoder outputs for this file.
    var expectedChannels: PixelFormat.Channels {
        switch colorType {
        case 0: return hasTRNS ? .grayAlpha : .gray
        case 4: return .grayAlpha
        case 6: return .rgba
        default: return hasTRNS ? .rgba : .rgb
        }
    }
}
