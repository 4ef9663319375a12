#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image format, identified by a uniform type identifier.
///
/// An extensible struct rather than an enum: a plugin for a format NukeCore does not know
/// declares its own constant and, if it wants sniffing, registers a matcher with
/// ``register(_:name:filenameExtensions:matches:)``.
public struct ImageType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier, such as `"public.jpeg"`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    /// JPEG (`public.jpeg`).
    public static let jpeg: ImageType = "public.jpeg"
    /// PNG, animated PNG included (`public.png`).
    public static let png: ImageType = "public.png"
    /// GIF (`com.compuserve.gif`).
    public static let gif: ImageType = "com.compuserve.gif"
    /// WebP (`org.webmproject.webp`, Nuke 13's identifier).
    public static let webp: ImageType = "org.webmproject.webp"
    /// HEIC: HEIF with HEVC images (`public.heic`).
    public static let heic: ImageType = "public.heic"
    /// HEIF with other codecs (`public.heif`).
    public static let heif: ImageType = "public.heif"
    /// AVIF: HEIF with AV1 images (`public.avif`).
    public static let avif: ImageType = "public.avif"
    /// SVG and gzip-compressed SVGZ (`public.svg-image`).
    public static let svg: ImageType = "public.svg-image"

    /// Whether this process knows the format: built in, or registered with
    /// ``register(_:name:filenameExtensions:matches:)``.
    public var isKnown: Bool {
        ImageType.registered[self] != nil || name != rawValue
    }

    /// A short human-readable name such as `"JPEG"`.
    public var name: String {
        if let custom = ImageType.registered[self]?.name { return custom }
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .gif: return "GIF"
        case .webp: return "WebP"
        case .heic: return "HEIC"
        case .heif: return "HEIF"
        case .avif: return "AVIF"
        case .jpeg2000: return "JPEG 2000"
        case .mp4: return "MPEG-4"
        case .m4v: return "M4V"
        case .mov: return "QuickTime"
        default: return rawValue
        }
    }

    /// The usual filename extensions, preferred first.
    public var filenameExtensions: [String] {
        if let custom = ImageType.registered[self]?.extensions { return custom }
        switch self {
        case .jpeg: return ["jpg", "jpeg", "jpe", "jfif"]
        case .png: return ["png"]
        case .gif: return ["gif"]
        case .webp: return ["webp"]
        case .heic: return ["heic", "heics"]
        case .heif: return ["heif", "heifs", "hif"]
        case .avif: return ["avif", "avifs"]
        case .jpeg2000: return ["jp2", "j2k"]
        case .mp4: return ["mp4"]
        case .m4v: return ["m4v"]
        case .mov: return ["mov"]
        default: return []
        }
    }

    /// The type whose extensions include `filenameExtension` (case-insensitive), if any.
    public init?(filenameExtension: String) {
        let ext = filenameExtension.lowercased()
        let known: [ImageType] = [.jpeg, .png, .gif, .webp, .heic, .heif, .avif] + ImageType.registered.keys.sorted { $0.rawValue < $1.rawValue }
        guard let match = known.first(where: { $0.filenameExtensions.contains(ext) }) else { return nil }
        self = match
    }

    public var description: String { name }
}
