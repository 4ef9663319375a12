#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

extension ImageType {
    /// Determines the format from the first bytes of `data`, or returns `nil`.
    ///
    /// Recognises JPEG, PNG, GIF, WebP, the ISO-BMFF family by `ftyp` brand (HEIC, HEIF, AVIF),
    /// TIFF and BigTIFF, JPEG XL (codestream or container), BMP, ICO, CUR, XBM,
    /// SVG (XML whose root element is `svg`, also behind a byte-order mark, an XML declaration,
    /// comments, processing instructions or a DOCTYPE), and every type registered with
    /// ``register(_:name:filenameExtensions:matches:)``. Built-in signatures are checked first.
    ///
    /// Twelve bytes settle every binary format; fewer may return `nil` for a file that more
    /// bytes would identify.
    public init?(_ data: Data) {
        let type: ImageType? = data.withUnsafeBytes { raw in
            ImageType.sniffBinary(raw.bindMemory(to: UInt8.self))
        }
        if let type {
            self = type
            return
        }
        let custom = ImageType.customTypes.withLock { $0.compactMap { ($0.key, $0.value.matches) } }
        for (type, matches) in custom.sorted(by: { $0.0.rawValue < $1.0.rawValue }) where matches?(data) == true {
            self = type
            return
        }
        if ImageType.isXBM(data) {
            self = .xbm
            return
        }
        if ImageType.isSVG(data) {
            self = .svg
            return
        }
        return nil
    }

    /// Registers a custom format so that ``name``, ``filenameExtensions`` and sniffing know it.
    ///
    /// - Parameters:
    ///   - type: The format.
    ///   - name: A short name for messages.
    ///   - filenameExtensions: Extensions, preferred first.
    ///   - matches: Returns `true` when the data starts like this format. It runs outside any lock.
    public static func register(
        _ type: ImageType,
        name: String,
        filenameExtensions: [String] = [],
        matches: (@Sendable (Data) -> Bool)? = nil
    ) {
        customTypes.withLock {
            $0[type] = CustomType(name: name, extensions: filenameExtensions.map { $0.lowercased() }, matches: matches)
        }
    }

    struct CustomType: Sendable {
        var name: String
        var extensions: [String]
        var matches: (@Sendable (Data) -> Bool)?
    }

    /// Fewer bytes than this may be too few to tell the format (ISO-BMFF needs its `ftyp` brand).
    static let sniffLength = 12

    static let customTypes = Mutex<[ImageType: CustomType]>([:])

    private static func sniffBinary(_ b: UnsafeBufferPointer<UInt8>) -> ImageType? {
        let n = b.count
        if n >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF { return .jpeg }
        if n >= 8, b[0] == 0x89, b[1] == 0x50, b[2] == 0x4E, b[3] == 0x47,
           b[4] == 0x0D, b[5] == 0x0A, b[6] == 0x1A, b[7] == 0x0A { return .png }
        if n >= 6, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46, b[3] == 0x38,
           b[4] == 0x37 || b[4] == 0x39, b[5] == 0x61 { return .gif }
        if n >= 12, b[0] == 0x52, b[1] == 0x49, b[2] == 0x46, b[3] == 0x46,
           b[8] == 0x57, b[9] == 0x45, b[10] == 0x42, b[11] == 0x50 { return .webp }
        if n >= 12, b[4] == 0x66, b[5] == 0x74, b[6] == 0x79, b[7] == 0x70 {
            if let type = sniffISOBMFF(b) { return type }
        }
        // TIFF and BigTIFF, either byte order.
        if n >= 4, b[0] == 0x49, b[1] == 0x49, b[2] == 0x2A || b[2] == 0x2B, b[3] == 0 { return .tiff }
        if n >= 4, b[0] == 0x4D, b[1] == 0x4D, b[2] == 0, b[3] == 0x2A || b[3] == 0x2B { return .tiff }
        // JPEG XL: a bare codestream, or the ISO-BMFF container's signature box.
        if n >= 2, b[0] == 0xFF, b[1] == 0x0A { return .jxl }
        if n >= 12, b[0] == 0, b[1] == 0, b[2] == 0, b[3] == 0x0C, b[4] == 0x4A, b[5] == 0x58, b[6] == 0x4C,
           b[7] == 0x20, b[8] == 0x0D, b[9] == 0x0A, b[10] == 0x87, b[11] == 0x0A { return .jxl }
        // BMP: "BM", then (once 18 bytes are here) a DIB header size that some version uses.
        if n >= 2, b[0] == 0x42, b[1] == 0x4D {
            guard n >= 18 else { return .bmp }
            let headerSize = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize) { return .bmp }
        }
        // ICO (type 1) and CUR (type 2): a reserved zero word, the type, at least one entry.
        if n >= 6, b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0, b[4] != 0 || b[5] != 0,
           n < 10 || b[9] == 0 {
            return b[2] == 1 ? .ico : .cur
        }
        return nil
    }

    /// Returns `true` when `data` is an X bitmap: C source whose first line is
    /// `#define <name>_width <n>`, after white space and C comments.
    static func isXBM(_ data: Data) -> Bool {
        guard let text = String(bytes: data.prefix(512), encoding: .isoLatin1) else { return false }
        var rest = Substring(text)
        while true {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            guard rest.hasPrefix("/*") else { break }
            guard let end = rest.range(of: "*/") else { return false }
            rest = rest[end.upperBound...]
        }
        guard rest.hasPrefix("#define") else { return false }
        let line = rest.prefix(while: { $0 != "\n" && $0 != "\r" })
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return words.count >= 3 && words[1].hasSuffix("_width") && Int(words[2]) != nil
    }

    /// Classifies an ISO-BMFF file by the brands in its `ftyp` box.
    private static func sniffISOBMFF(_ b: UnsafeBufferPointer<UInt8>) -> ImageType? {
        func brand(at i: Int) -> UInt32 {
            UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
        }
        func fourCC(_ s: StaticString) -> UInt32 {
            s.withUTF8Buffer { p in UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3]) }
        }
        let boxSize = Int(brand(at: 0))
        let end = min(b.count, boxSize >= 16 ? boxSize : 16)
        var brands = [brand(at: 8)]
        var i = 16
        while i + 4 <= end {
            brands.append(brand(at: i))
            i += 4
        }
        let avif: Set = [fourCC("avif"), fourCC("avis")]
        let heic: Set = [fourCC("heic"), fourCC("heix"), fourCC("heim"), fourCC("heis"), fourCC("hevc"), fourCC("hevx")]
        let heif: Set = [fourCC("mif1"), fourCC("msf1"), fourCC("mif2")]
        let major = brands[0]
        if avif.contains(major) { return .avif }
        if heic.contains(major) { return .heic }
        if brands.contains(where: avif.contains) { return .avif }
        if brands.contains(where: heic.contains) { return .heic }
        if brands.contains(where: heif.contains) { return .heif }
        return nil
    }

    /// Returns `true` when `data` is XML whose root element is `svg` (with or without a prefix).
    ///
    /// Skips a UTF-8 byte-order mark, white space, the XML declaration, processing
    /// instructions, comments and a DOCTYPE (with an internal subset) within the first 64 KiB.
    static func isSVG(_ data: Data) -> Bool {
        data.prefix(65_536).withUnsafeBytes { raw -> Bool in
            let b = raw.bindMemory(to: UInt8.self)
            var i = 0
            if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
            func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 } }
            func starts(_ s: String) -> Bool {
                let u = Array(s.utf8)
                guard i + u.count <= b.count else { return false }
                for k in 0..<u.count where b[i + k] != u[k] { return false }
                return true
            }
            func skip(past terminator: String) -> Bool {
                while i < b.count {
                    if starts(terminator) { i += terminator.utf8.count; return true }
                    i += 1
                }
                return false
            }
            while true {
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: "<") else { return false }
                if starts("<?") {
                    guard skip(past: "?>") else { return false }
                } else if starts("<!--") {
                    guard skip(past: "-->") else { return false }
                } else if starts("<!DOCTYPE") || starts("<!doctype") {
                    // Skip to the closing '>', honouring an internal subset in brackets.
                    var depth = 0
                    while i < b.count {
                        let c = b[i]
                        i += 1
                        if c == UInt8(ascii: "[") { depth += 1 }
                        else if c == UInt8(ascii: "]") { depth -= 1 }
                        else if c == UInt8(ascii: ">"), depth <= 0 { break }
                    }
                    if i >= b.count { return false }
                } else {
                    // The root element: read its (possibly prefixed) name.
                    i += 1
                    var name: [UInt8] = []
                    while i < b.count, name.count < 64 {
                        let c = b[i]
                        if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ">") || c == UInt8(ascii: "/") { break }
                        name.append(c)
                        i += 1
                    }
                    let local = name.split(separator: UInt8(ascii: ":")).last.map(Array.init) ?? []
                    return local == Array("svg".utf8) && i < b.count
                }
            }
        }
    }
}
