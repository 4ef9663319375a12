#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How to rotate or flip the stored pixels for display, as the EXIF `Orientation` tag says.
///
/// Raw values are the EXIF values 1–8. Decoders report orientation and leave the pixels as
/// stored, as Nuke and ImageIO do; `oriented(_:)` applies it when wanted.
public enum ImageOrientation: UInt8, Sendable, Hashable, CaseIterable {
    /// As stored (EXIF 1).
    case up = 1
    /// Mirrored left to right (EXIF 2).
    case upMirrored = 2
    /// Rotated 180° (EXIF 3).
    case down = 3
    /// Mirrored top to bottom (EXIF 4).
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (EXIF 5).
    case leftMirrored = 5
    /// Shown after rotating 90° clockwise (EXIF 6).
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (EXIF 7).
    case rightMirrored = 7
    /// Shown after rotating 90° counter-clockwise (EXIF 8).
    case left = 8

    /// `true` when displaying swaps width and height (values 5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// Reads the orientation from an EXIF block (a TIFF header and IFD0).
    ///
    /// Accepts the block with or without the `Exif\0\0` prefix of a JPEG APP1 segment, in
    /// either byte order. Returns `nil` when the block is malformed or has no valid tag.
    public init?(exif: Data) {
        let bytes = [UInt8](exif.prefix(65_536))
        var base = 0
        if bytes.count >= 6, bytes[0] == 0x45, bytes[1] == 0x78, bytes[2] == 0x69, bytes[3] == 0x66,
           bytes[4] == 0, bytes[5] == 0 {
            base = 6
        }
        guard bytes.count >= base + 8 else { return nil }
        let little: Bool
        switch (bytes[base], bytes[base + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ i: Int) -> Int? {
            guard i >= 0, i + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[i]) | Int(bytes[i + 1]) << 8 : Int(bytes[i]) << 8 | Int(bytes[i + 1])
        }
        func u32(_ i: Int) -> Int? {
            guard let a = u16(i), let b = u16(i + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(base + 2) == 42, let ifd = u32(base + 4), let count = u16(base + ifd) else { return nil }
        for entry in 0..<min(count, 512) {
            let p = base + ifd + 2 + entry * 12
            guard let tag = u16(p) else { return nil }
            guard tag == 0x0112 else { continue }
            guard u16(p + 2) == 3, let value = u16(p + 8), let orientation = ImageOrientation(rawValue: UInt8(clamping: value)) else {
                return nil
            }
            self = orientation
            return
        }
        return nil
    }
}
