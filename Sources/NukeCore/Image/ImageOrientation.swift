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
        guard let orientation = ExifBlock(exif)?.orientation else { return nil }
        self = orientation
    }
}
