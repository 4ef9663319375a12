import NukeCore
import NukePluginKit

/// A device-independent bitmap's header, as read from a BMP file or an ICO/CUR entry: every size
/// and offset checked against the data's length with overflow-checked arithmetic.
///
/// Reads `BITMAPCOREHEADER` (12 bytes), OS/2 2.x headers (16 or 64 bytes), `BITMAPINFOHEADER` (40),
/// the V2 and V3 headers (52, 56), `BITMAPV4HEADER` (108) and `BITMAPV5HEADER` (124), with their
/// colour masks (in the header, or after a 40-byte one for `BI_BITFIELDS` and
/// `BI_ALPHABITFIELDS`), their palette (3-byte entries after a core header, 4-byte otherwise) and
/// a V5 header's embedded ICC profile.
package struct BMPHeader: Sendable {
    /// How the pixels are stored.
    package enum Compression: String, Sendable, Hashable {
        case none, rle8, rle4, rle24, bitfields, alphabitfields
    }

    /// The DIB header's size, which tells its version.
    package var headerSize: Int
    /// Width and height in pixels (the height positive; for an ICO entry, the XOR bitmap's).
    package var width: Int
    package var height: Int
    /// `true` when the first row in the file is the top one (a negative height).
    package var isTopDown: Bool
    /// Bits per pixel.
    package var bitCount: Int
    package var compression: Compression
    /// Red, green, blue and alpha masks for 16- and 32-bit pixels (alpha 0: none).
    package var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)
    /// The palette, expanded to 256 entries (missing ones black), as RGB triples.
    package var palette: [UInt8]
    /// How many palette entries the file holds (indices at or above it are out of range).
    package var paletteCount: Int
    /// Where the pixels start in the data.
    package var pixelOffset: Int
    /// Bytes per stored row (rows are padded to 32 bits).
    package var stride: Int
    /// The embedded ICC profile's bytes in the data (a V5 header with `PROFILE_EMBEDDED`).
    package var iccRange: Range<Int>?
    /// What the header had wrong that the reader tolerated.
    package var warnings: [String]

    /// `BI_*` compression values.
    private static let compressionNames: [UInt32: String] = [3: "BI_BITFIELDS", 4: "BI_JPEG", 5: "BI_PNG", 11: "BI_CMYK", 12: "BI_CMYKRLE8", 13: "BI_CMYKRLE4"]

    /// `LCS_PROFILE_EMBEDDED` ('MBED').
    private static let profileEmbedded: UInt32 = 0x4D42_4544

    /// Reads the DIB header at `dibOffset` of `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: The whole input (a BMP file, or an ICO file).
    ///   - dibOffset: Where the DIB header starts.
    ///   - end: Where the DIB's data ends (the file's end, or the ICO entry's).
    ///   - fileOffset: A BMP file header's `bfOffBits`; `nil` in an ICO, where the pixels follow
    ///     the palette.
    ///   - halvesHeight: `true` in an ICO, whose DIB height counts the AND mask's rows too.
    ///   - alphaInRGB32: `true` in an ICO, whose 32-bit `BI_RGB` pixels carry alpha.
    package static func read(
        _ bytes: UnsafeRawBufferPointer, dibOffset: Int, end: Int, fileOffset: Int?, halvesHeight: Bool = false, alphaInRGB32: Bool = false
    ) -> HeaderRead<BMPHeader> {
        let end = min(end, bytes.count)
        guard let sizeEnd = checkedAdd(dibOffset, 4), sizeEnd <= end else { return .needsMoreData }
        let headerSize = Int(bytes.le32(dibOffset))
        let isCore = headerSize == 12
        let isWindows = [40, 52, 56, 108, 124].contains(headerSize)
        let isOS2 = headerSize == 16 || headerSize == 64   // OS/2 2.x: the sizes the sniffer knows
        guard isCore || isWindows || isOS2 else { return .invalid(.corrupt, "unknown DIB header size \(headerSize)") }
        guard dibOffset + headerSize <= end else { return .needsMoreData }
        let h = dibOffset
        var warnings: [String] = []

        var width: Int, height: Int, bitCount: Int, rawCompression: UInt32 = 0, colorsUsed = 0
        if isCore {
            width = Int(bytes.le16(h + 4))
            height = Int(bytes.le16(h + 6))
            bitCount = Int(bytes.le16(h + 10))
        } else {
            width = Int(Int32(bitPattern: bytes.le32(h + 4)))
            height = Int(Int32(bitPattern: bytes.le32(h + 8)))
            bitCount = Int(bytes.le16(h + 14))
            if headerSize >= 20 { rawCompression = bytes.le32(h + 16) }
            if headerSize >= 36 { colorsUsed = Int(bytes.le32(h + 32)) }
        }
        if halvesHeight { height /= 2 }
        // A negative height (an Int32's, so its magnitude fits) stores the rows top-down.
        let isTopDown = height < 0
        height = abs(height)
        guard width > 0, height > 0 else { return .invalid(.corrupt, "invalid image size \(width)×\(height)") }

        // The compression, and the bit counts it allows.
        let (compression, validBitCounts): (Compression, [Int])
        switch rawCompression {
        case 0: (compression, validBitCounts) = (.none, [1, 2, 4, 8, 16, 24, 32])
        case 1: (compression, validBitCounts) = (.rle8, [8])
        case 2: (compression, validBitCounts) = (.rle4, [4])
        case 3 where isOS2: return .invalid(.unsupported, "OS/2 Huffman 1D compression is not supported")
        case 3: (compression, validBitCounts) = (.bitfields, [16, 32])
        case 4 where isOS2: (compression, validBitCounts) = (.rle24, [24])
        case 6: (compression, validBitCounts) = (.alphabitfields, [16, 32])
        default:
            let name = compressionNames[rawCompression] ?? "compression \(rawCompression)"
            return .invalid(.unsupported, "\(name) is not supported")
        }
        guard bitCount != 64 else { return .invalid(.unsupported, "64-bit pixels are not supported") }
        guard validBitCounts.contains(bitCount) else { return .invalid(.corrupt, "\(bitCount) bits per pixel with \(compression.rawValue) compression") }

        // Masks: in a V2+ header, or after a 40-byte one.
        var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)
        var afterHeader = h + headerSize
        switch compression {
        case .bitfields, .alphabitfields:
            if headerSize >= 52 {
                masks = (bytes.le32(h + 40), bytes.le32(h + 44), bytes.le32(h + 48), headerSize >= 56 ? bytes.le32(h + 52) : 0)
            } else {
                let count = compression == .alphabitfields ? 4 : 3
                guard afterHeader + 4 * count <= end else { return .needsMoreData }
                masks = (bytes.le32(afterHeader), bytes.le32(afterHeader + 4), bytes.le32(afterHeader + 8),
                         count == 4 ? bytes.le32(afterHeader + 12) : 0)
                afterHeader += 4 * count
            }
            if compression == .alphabitfields && headerSize >= 52 && headerSize < 56 { masks.alpha = 0 }
        default:
            // BI_RGB: the standard masks. Alpha, as Chromium decides it: a V3+ header's alpha mask
            // holds even without BI_BITFIELDS; a 32-bit INFO header's fourth byte is unused except
            // in an ICO (Pillow and Firefox ignore it too).
            let headerAlpha = isWindows && headerSize >= 56 ? bytes.le32(h + 52) : 0
            if bitCount == 16 {
                masks = (0x7C00, 0x03E0, 0x001F, headerAlpha)
            } else {
                masks = (0xFF_0000, 0xFF00, 0xFF, headerAlpha != 0 ? headerAlpha : (alphaInRGB32 && bitCount == 32 ? 0xFF00_0000 : 0))
            }
        }
        // Masks trimmed to the pixel's bits (some V4+ files declare alpha in bits 16-31 of 16-bit pixels).
        if bitCount < 32 {
            let bits = UInt32((1 << bitCount) - 1)
            masks = (masks.red & bits, masks.green & bits, masks.blue & bits, masks.alpha & bits)
        }
        if masks.red == 0 && masks.green == 0 && masks.blue == 0 && (compression == .bitfields || compression == .alphabitfields) {
            return .invalid(.corrupt, "the colour masks are all zero")
        }

        // The palette.
        let entrySize = isCore ? 3 : 4
        guard colorsUsed >= 0, colorsUsed <= 1 << 24 else { return .invalid(.corrupt, "\(colorsUsed) palette entries") }
        let declared = bitCount <= 8 ? (colorsUsed == 0 ? 1 << bitCount : colorsUsed) : colorsUsed
        if bitCount <= 8 && declared > 1 << bitCount {
            warnings.append("the palette has \(declared) entries, more than \(1 << bitCount) bits per pixel use")
        }
        let paletteEnd = afterHeader + declared * entrySize   // at most 2^24 × 4 after a checked offset: no overflow

        // Where the pixels are.
        var pixelOffset = paletteEnd
        if let fileOffset {
            if fileOffset >= afterHeader {
                pixelOffset = fileOffset
            } else {
                warnings.append("the pixel offset \(fileOffset) points inside the headers; the pixels are read after the palette")
            }
        }
        // The palette's entries present before the pixels (or the data's end).
        var palette = [UInt8](repeating: 0, count: 768)
        var paletteCount = 0
        if bitCount <= 8 {
            let available = max(0, (min(pixelOffset, end) - afterHeader) / entrySize)
            paletteCount = min(declared, available, 256)
            for i in 0..<paletteCount {
                let at = afterHeader + i * entrySize
                palette[3 * i] = bytes[at + 2]
                palette[3 * i + 1] = bytes[at + 1]
                palette[3 * i + 2] = bytes[at]
            }
            if paletteCount < min(declared, 256) && pixelOffset <= end {
                warnings.append("the palette has \(paletteCount) of its \(declared) entries")
            }
        }

        guard let bitsPerRow = checkedMultiply(width, bitCount), let stride = checkedMultiply((bitsPerRow + 31) / 32, 4) else {
            return .invalid(.corrupt, "the rows of a \(width)-pixel-wide image overflow")
        }

        var iccRange: Range<Int>?
        if headerSize >= 124, bytes.le32(h + 56) == profileEmbedded {
            let offset = Int(bytes.le32(h + 112)), size = Int(bytes.le32(h + 116))
            if let start = checkedAdd(h, offset), let stop = checkedAdd(start, size), size > 0, stop <= end {
                iccRange = start..<stop
            } else {
                warnings.append("the embedded ICC profile (\(size) bytes at \(offset)) is outside the file")
            }
        }

        return .header(BMPHeader(
            headerSize: headerSize, width: width, height: height, isTopDown: isTopDown, bitCount: bitCount, compression: compression,
            masks: masks, palette: palette, paletteCount: paletteCount, pixelOffset: pixelOffset, stride: stride, iccRange: iccRange,
            warnings: warnings
        ))
    }

    /// `true` for run-length encoded pixels.
    package var isRLE: Bool { compression == .rle4 || compression == .rle8 || compression == .rle24 }

    /// `true` when the pixels carry alpha (a mask for it).
    package var hasAlpha: Bool { bitCount >= 16 && masks.alpha != 0 }

    /// `true` when every palette entry the file holds is gray.
    package var isGrayPalette: Bool {
        guard bitCount <= 8, !isRLE, paletteCount > 0 else { return false }
        for i in 0..<paletteCount where palette[3 * i] != palette[3 * i + 1] || palette[3 * i] != palette[3 * i + 2] { return false }
        return true
    }

    /// The decoded layout: gray for a gray palette, RGBA with alpha (RLE pixels may be skipped
    /// and left transparent), RGB otherwise.
    package var pixelFormat: PixelFormat {
        if hasAlpha || isRLE { return .rgba8 }
        return isGrayPalette ? .gray8 : .rgb8
    }
}
