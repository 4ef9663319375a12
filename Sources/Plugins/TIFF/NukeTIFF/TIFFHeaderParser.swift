#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// The TIFF header hook: the first directory's size, samples and orientation, and the number
/// of pages when every directory is among the bytes given.
enum TIFFHeaderParser {
    /// Directories counted at most: a file with more is not a document anyone pages through.
    static let maxPages = 65_536

    static func parse(_ data: Data) -> ImageHeader.ParseResult {
        data.withUnsafeBytes { raw in parse(TIFFBytes(raw.bindMemory(to: UInt8.self))) }
    }

    static func parse(_ b: TIFFBytes) -> ImageHeader.ParseResult {
        guard b.count >= 8 else { return .needsMoreData }
        guard let first = b.firstDirectory else { return .unavailable }
        guard let directory = b.directory(at: first) else { return .needsMoreData }
        guard let width = directory.value(256), let height = directory.value(257), width > 0, height > 0 else { return .unavailable }
        let samples = directory.value(277) ?? 1
        let photometric = directory.value(262)
        let extraSamples = directory.count(338) ?? 0
        var header = ImageHeader(
            type: .tiff, width: width, height: height, bitDepth: directory.value(258) ?? 1,
            componentCount: photometric == 3 ? 3 + (extraSamples > 0 ? 1 : 0) : samples,
            // CMYK (separated, 4 samples) has no alpha; other 4-sample pages say so in ExtraSamples.
            hasAlpha: extraSamples > 0 ? true : (samples <= 3 || (samples == 4 && photometric == 5) ? false : nil),
            orientation: directory.value(274).flatMap { UInt8(exactly: $0) }.flatMap { ImageOrientation(rawValue: $0) }
        )
        // Pages: follow the chain while it stays among the bytes given.
        var pages = 1
        var next = directory.next
        var seen: Set<Int> = [first]
        while next != 0, pages < maxPages {
            guard seen.insert(next).inserted, let following = b.directory(at: next) else { break }
            pages += 1
            next = following.next
        }
        if next == 0 { header.frameCount = pages }
        return .parsed(header)
    }
}

/// A TIFF's bytes, read in its byte order (classic TIFF and BigTIFF).
struct TIFFBytes {
    let bytes: UnsafeBufferPointer<UInt8>
    let littleEndian: Bool
    let big: Bool

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        littleEndian = bytes.count >= 2 && bytes[0] == 0x49
        big = bytes.count >= 4 && (littleEndian ? bytes[2] : bytes[3]) == 0x2B
    }

    var count: Int { bytes.count }

    func uint(_ offset: Int, _ size: Int) -> Int? {
        guard offset >= 0, size <= 8, offset <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for i in 0..<size {
            let byte = UInt64(bytes[offset + (littleEndian ? size - 1 - i : i)])
            value = value << 8 | byte
        }
        return value > UInt64(Int.max) ? nil : Int(value)
    }

    /// The first directory's offset, or `nil` when this is no TIFF.
    var firstDirectory: Int? {
        guard bytes.count >= 8, bytes[0] == bytes[1], bytes[0] == 0x49 || bytes[0] == 0x4D else { return nil }
        guard let magic = uint(2, 2), magic == 42 || magic == 43 else { return nil }
        if big {
            guard uint(4, 2) == 8 else { return nil }
            return uint(8, 8)
        }
        return uint(4, 4)
    }

    /// The directory at `offset`, when all of it is here.
    func directory(at offset: Int) -> Directory? {
        let countSize = big ? 8 : 2, entrySize = big ? 20 : 12, nextSize = big ? 8 : 4
        guard offset >= 8, let entries = uint(offset, countSize), entries > 0, entries <= 65_535 else { return nil }
        let end = offset + countSize + entries * entrySize
        guard let next = uint(end, nextSize) else { return nil }
        return Directory(bytes: self, start: offset + countSize, entries: entries, next: next)
    }

    struct Directory {
        let bytes: TIFFBytes
        let start: Int
        let entries: Int
        let next: Int

        /// The entry of `tag`'s offset.
        private func entry(_ tag: Int) -> Int? {
            let size = bytes.big ? 20 : 12
            for i in 0..<entries where bytes.uint(start + i * size, 2) == tag { return start + i * size }
            return nil
        }

        /// The tag's value count.
        func count(_ tag: Int) -> Int? {
            guard let e = entry(tag) else { return nil }
            return bytes.uint(e + 4, bytes.big ? 8 : 4)
        }

        /// The tag's first value, when it is a BYTE, SHORT, LONG or LONG8 (in the entry, or at
        /// the offset it gives when the values do not fit).
        func value(_ tag: Int) -> Int? {
            guard let e = entry(tag), let type = bytes.uint(e + 2, 2), let count = count(tag), count > 0 else { return nil }
            let size: Int
            switch type {
            case 1: size = 1
            case 3: size = 2
            case 4: size = 4
            case 16: size = 8
            default: return nil
            }
            let inline = bytes.big ? 8 : 4
            var field = e + (bytes.big ? 12 : 8)
            if count > inline / size {
                guard let offset = bytes.uint(field, inline) else { return nil }
                field = offset
            }
            return bytes.uint(field, size)
        }
    }
}
