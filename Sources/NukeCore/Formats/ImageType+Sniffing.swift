#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

extension ImageType {
    /// Determines the format from the first bytes of `data`, or returns `nil`.
    ///
    /// The core recognises Nuke's formats by signature: JPEG, PNG, GIF, WebP and the ISO-BMFF
    /// family by `ftyp` brand (HEIC, HEIF, AVIF). Every other format is its plugin's, registered
    /// with ``register(_:name:filenameExtensions:matches:)`` when the app links it (NukeTIFF's
    /// TIFF, NukeSVG's SVG...). Built-in signatures are checked first.
    ///
    /// Twelve bytes settle the built-in formats; fewer may return `nil` for a file that more
    /// bytes would identify.
    public init?(_ data: Data) {
        let type: ImageType? = data.withUnsafeBytes { raw in
            ImageType.sniffBinary(raw.bindMemory(to: UInt8.self))
        }
        if let type {
            self = type
            return
        }
        let custom = ImageType.registered.compactMap { type, custom in custom.matches.map { (type, $0) } }
        for (type, matches) in custom.sorted(by: { $0.0.rawValue < $1.0.rawValue }) where matches(data) {
            self = type
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

    /// The registered formats, once the linked products' records have registered theirs.
    static var registered: [ImageType: CustomType] {
        _ = ImageCodecs.linked
        return customTypes.withLock { $0 }
    }

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
        return nil
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
}
