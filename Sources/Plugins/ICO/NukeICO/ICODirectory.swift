#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// An ICO or CUR file's directory: the 6-byte header (reserved 0, type 1 for ICO or 2 for CUR,
/// the entry count) and 16 bytes per entry, with what each entry's own header says when its
/// bytes are there.
struct ICODirectory {
    struct Entry {
        /// Its place in the directory.
        var index: Int
        /// The size its own header says (a PNG's IHDR, a DIB's header with the height halved),
        /// else the directory's (0 meaning 256).
        var width: Int
        var height: Int
        /// Bits per pixel (PNG entries count as 32).
        var bitCount: Int
        /// CUR: the hotspot (the fields an ICO uses for planes and bit count).
        var hotspot: CursorHotspot
        var offset: Int
        var size: Int
        var isPNG: Bool

        /// Width × height, saturated (a PNG's IHDR may say up to 2³² − 1 a side).
        var area: Int {
            let (product, overflow) = width.multipliedReportingOverflow(by: height)
            return overflow ? .max : product
        }
    }

    var type: ImageType
    var entries: [Entry]

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the directory from the whole file or its first bytes.
    static func read(_ b: UnsafeRawBufferPointer) -> HeaderRead<ICODirectory> {
        guard b.count >= 6 else { return .needsMoreData }
        guard b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0 else { return .corrupt("not an ICO or CUR file") }
        let type: ImageType = b[2] == 1 ? .ico : .cur
        let count = Int(b[4]) | Int(b[5]) << 8
        guard count > 0 else { return .corrupt("the directory has no entries") }
        guard b.count >= 6 + 16 * count else { return .needsMoreData }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            let e = 6 + 16 * index
            let directoryWidth = b[e] == 0 ? 256 : Int(b[e])
            let directoryHeight = b[e + 1] == 0 ? 256 : Int(b[e + 1])
            let field1 = Int(b[e + 4]) | Int(b[e + 5]) << 8, field2 = Int(b[e + 6]) | Int(b[e + 7]) << 8
            let size = Int(UInt32(b[e + 8]) | UInt32(b[e + 9]) << 8 | UInt32(b[e + 10]) << 16 | UInt32(b[e + 11]) << 24)
            let offset = Int(UInt32(b[e + 12]) | UInt32(b[e + 13]) << 8 | UInt32(b[e + 14]) << 16 | UInt32(b[e + 15]) << 24)
            var entry = Entry(index: index, width: directoryWidth, height: directoryHeight, bitCount: type == .ico ? field2 : 0,
                              hotspot: CursorHotspot(x: type == .cur ? field1 : 0, y: type == .cur ? field2 : 0),
                              offset: offset, size: size, isPNG: false)
            // What the entry's own header says, when it is here.
            if offset + 8 <= b.count, (0..<8).allSatisfy({ b[offset + $0] == pngSignature[$0] }) {
                entry.isPNG = true
                entry.bitCount = 32
                if offset + 24 <= b.count {
                    func be32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
                    entry.width = be32(offset + 16)
                    entry.height = be32(offset + 20)
                }
            } else if offset + 16 <= b.count {
                let headerSize = Int(b[offset]) | Int(b[offset + 1]) << 8
                if headerSize == 12 {
                    entry.width = Int(b[offset + 4]) | Int(b[offset + 5]) << 8
                    entry.height = (Int(b[offset + 6]) | Int(b[offset + 7]) << 8) / 2
                    entry.bitCount = Int(b[offset + 10]) | Int(b[offset + 11]) << 8
                } else if headerSize >= 16 {
                    func le32(_ i: Int) -> Int { Int(Int32(bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24)) }
                    entry.width = abs(le32(offset + 4))
                    entry.height = abs(le32(offset + 8)) / 2
                    entry.bitCount = Int(b[offset + 14]) | Int(b[offset + 15]) << 8
                }
            }
            entries.append(entry)
        }
        return .header(ICODirectory(type: type, entries: entries))
    }

    /// The entry that best fits `target`: the largest without one; else the smallest covering
    /// it on both sides (the largest when none does). Ties go to the higher bit depth, then to
    /// the earlier entry.
    func best(for target: ImageSize?) -> Entry {
        func better(_ a: Entry, _ b: Entry, larger: Bool) -> Bool {
            if a.area != b.area { return larger ? a.area > b.area : a.area < b.area }
            return a.bitCount > b.bitCount
        }
        var largest = entries[0]
        for entry in entries.dropFirst() where better(entry, largest, larger: true) { largest = entry }
        guard let target else { return largest }
        var best: Entry?
        for entry in entries where entry.width >= target.width && entry.height >= target.height {
            if let current = best, !better(entry, current, larger: false) { continue }
            best = entry
        }
        return best ?? largest
    }
}
