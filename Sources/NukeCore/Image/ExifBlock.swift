#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An EXIF block (a TIFF header and its IFDs) edited in place: every change keeps the block's
/// length and the offsets inside it, so nothing else in it needs rewriting.
///
/// Encoders write EXIF through ``Image/metadataToWrite(options:writesGray:)``, which uses it to
/// make the Orientation tag agree with the pixels and to remove the GPS IFD.
public struct ExifBlock: Sendable, Hashable {
    /// The block, from the TIFF header on (without the `Exif\0\0` prefix of a JPEG APP1 segment).
    public private(set) var tiff: [UInt8]
    private let little: Bool
    private var ifd0: Int

    /// Reads the block's header; accepts it with or without the `Exif\0\0` prefix. `nil` when
    /// the TIFF header or IFD0's entry count is not inside the block. Entries that run past the
    /// end of a truncated block are not read.
    public init?(_ data: Data) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { bytes.removeFirst(6) }
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        tiff = bytes
        ifd0 = 0
        guard u16(2) == 42, let offset = u32(4), u16(offset) != nil else { return nil }
        ifd0 = offset
    }

    /// The block as `Data`, without the `Exif\0\0` prefix.
    public var data: Data { Data(tiff) }

    /// IFD0's Orientation, when the tag is there and valid.
    public var orientation: ImageOrientation? {
        guard let entry = entry(0x0112, in: ifd0), u16(entry + 2) == 3, let value = u16(entry + 8) else { return nil }
        return ImageOrientation(rawValue: UInt8(clamping: value))
    }

    /// `true` when IFD0 points to a GPS IFD.
    public var hasLocation: Bool { entry(0x8825, in: ifd0) != nil }

    /// Sets IFD0's Orientation tag to `orientation`. Returns `false` when the block has no
    /// Orientation tag to set (a missing tag reads as 1, upright).
    @discardableResult
    public mutating func setOrientation(_ orientation: ImageOrientation) -> Bool {
        guard let entry = entry(0x0112, in: ifd0) else { return false }
        put16(entry + 2, 3)
        put32(entry + 4, 1)
        put16(entry + 8, Int(orientation.rawValue))
        put16(entry + 10, 0)
        return true
    }

    /// Removes the GPS IFD: its pointer leaves IFD0 (later entries move up one place, as TIFF
    /// keeps them sorted) and the IFD and every value it points to are overwritten with zeros.
    public mutating func removeLocation() {
        guard let pointer = entry(0x8825, in: ifd0), let count = u16(ifd0) else { return }
        if let gps = u32(pointer + 8) { zeroIFD(at: gps) }
        let end = ifd0 + 2 + count * 12
        guard end + 4 <= tiff.count else {
            // A truncated IFD0: the pointer is overwritten in place (tag 0 is no tag).
            for i in pointer..<(pointer + 12) { tiff[i] = 0 }
            return
        }
        // Entries after the pointer, then the next-IFD offset, move up by one entry.
        for i in (pointer + 12)..<(end + 4) { tiff[i - 12] = tiff[i] }
        for i in (end - 8)..<(end + 4) { tiff[i] = 0 }
        put16(ifd0, count - 1)
    }

    /// A minimal block: a big-endian TIFF header and IFD0 with Orientation alone.
    public static func orientationOnly(_ orientation: ImageOrientation) -> ExifBlock {
        let bytes: [UInt8] = [
            0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,
            0x00, 0x01,
            0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation.rawValue, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
        ]
        return ExifBlock(Data(bytes))!
    }

    // MARK: - The TIFF structure

    /// The offset of `tag`'s 12-byte entry in the IFD at `ifd`.
    private func entry(_ tag: Int, in ifd: Int) -> Int? {
        guard let count = u16(ifd) else { return nil }
        for index in 0..<count {
            let position = ifd + 2 + index * 12
            guard position + 12 <= tiff.count else { return nil }
            if u16(position) == tag { return position }
        }
        return nil
    }

    /// Zeros the IFD at `ifd` and the values its entries point to, as far as they lie in the block.
    private mutating func zeroIFD(at ifd: Int) {
        guard let count = u16(ifd) else { return }
        let sizes = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8]
        var end = ifd + 2
        for index in 0..<count {
            let position = ifd + 2 + index * 12
            guard position + 12 <= tiff.count, let type = u16(position + 2), let items = u32(position + 4) else { break }
            end = position + 12
            let size = (type < sizes.count ? sizes[type] : 0).multipliedReportingOverflow(by: items)
            if !size.overflow, size.partialValue > 4, let offset = u32(position + 8) {
                zero(offset, size.partialValue)
            }
        }
        zero(ifd, end + 4 - ifd)
    }

    private mutating func zero(_ start: Int, _ count: Int) {
        guard start >= 0, start < tiff.count, count > 0 else { return }
        for i in start..<min(tiff.count, start + count) { tiff[i] = 0 }
    }

    private func u16(_ i: Int) -> Int? {
        guard i >= 0, i + 2 <= tiff.count else { return nil }
        return little ? Int(tiff[i]) | Int(tiff[i + 1]) << 8 : Int(tiff[i]) << 8 | Int(tiff[i + 1])
    }

    private func u32(_ i: Int) -> Int? {
        guard let a = u16(i), let b = u16(i + 2) else { return nil }
        return little ? a | b << 16 : a << 16 | b
    }

    private mutating func put16(_ i: Int, _ value: Int) {
        guard i >= 0, i + 2 <= tiff.count else { return }
        let (hi, lo) = (UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
        (tiff[i], tiff[i + 1]) = little ? (lo, hi) : (hi, lo)
    }

    private mutating func put32(_ i: Int, _ value: Int) {
        let (hi, lo) = (value >> 16 & 0xFFFF, value & 0xFFFF)
        put16(i, little ? lo : hi)
        put16(i + 2, little ? hi : lo)
    }
}
