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

    /// Where moving one pixel right (`x`) and one row down (`y`) in the displayed image goes in
    /// the stored one, as (column, row) steps: the columns of the map from displayed to stored
    /// coordinates.
    package var steps: (x: (Int, Int), y: (Int, Int)) {
        switch self {
        case .up: ((1, 0), (0, 1))
        case .upMirrored: ((-1, 0), (0, 1))
        case .down: ((-1, 0), (0, -1))
        case .downMirrored: ((1, 0), (0, -1))
        case .leftMirrored: ((0, 1), (1, 0))
        case .right: ((0, -1), (1, 0))
        case .rightMirrored: ((0, -1), (-1, 0))
        case .left: ((0, 1), (-1, 0))
        }
    }

    /// The stored pixel (column, row) a `width × height` stored image shows at its displayed
    /// origin: the corner the steps start from.
    package func origin(width: Int, height: Int) -> (Int, Int) {
        let (sx, sy) = steps
        // A step that goes left (or up) from anywhere starts at the last column (or row).
        return (sx.0 < 0 || sy.0 < 0 ? width - 1 : 0, sx.1 < 0 || sy.1 < 0 ? height - 1 : 0)
    }

    /// Reads the orientation from an EXIF block (a TIFF header and IFD0).
    ///
    /// Accepts the block with or without the `Exif\0\0` prefix of a JPEG APP1 segment, in
    /// either byte order. Returns `nil` when the block is malformed or has no valid tag.
    public init?(exif: Data) {
        guard let orientation = ExifBlock(exif)?.orientation else { return nil }
        self = orientation
    }
}
