import Foundation

/// What an image file's header says, read in pure Swift before any decoder is created.
///
/// ``parse(_:)`` reads the first bytes of a file — JPEG `SOF` (skipping `APPn` segments of any
/// size, such as a large EXIF block), PNG `IHDR`, the GIF logical screen, WebP `VP8 `, `VP8L`
/// and `VP8X`, and the ISO-BMFF `ispe` property of the primary item (HEIC, HEIF, AVIF) — so a
/// caller can learn the size and choose a target size before any pixel memory is allocated.
///
/// ```swift
/// if case .parsed(let header) = ImageHeader.parse(bytesSoFar) {
///     print(header.type.name, header.size)
/// }
/// ```
public struct ImageHeader: Sendable, Hashable, CustomStringConvertible {
    /// The format.
    public var type: ImageType
    /// The width in pixels, as stored (before any EXIF rotation).
    public var width: Int
    /// The height in pixels, as stored.
    public var height: Int
    /// Bits per sample (JPEG precision, PNG bit depth), when the header says.
    public var bitDepth: Int?
    /// Channels in the file (JPEG components, PNG channels; 1 for a palette), when known.
    public var componentCount: Int?
    /// `true` when the file declares an alpha channel; `nil` when the header cannot tell.
    public var hasAlpha: Bool?
    /// `true` for a progressive JPEG or an interlaced PNG or GIF.
    public var isProgressive: Bool
    /// The number of frames, when the header gives it cheaply (APNG `acTL`); `nil` when unknown.
    public var frameCount: Int?
    /// `true` when the header declares an animation (APNG `acTL`, WebP `VP8X` flag).
    public var isAnimated: Bool
    /// The EXIF orientation, when an EXIF block comes before the frame header (JPEG).
    public var orientation: ImageOrientation?

    public init(
        type: ImageType,
        width: Int,
        height: Int,
        bitDepth: Int? = nil,
        componentCount: Int? = nil,
        hasAlpha: Bool? = nil,
        isProgressive: Bool = false,
        frameCount: Int? = nil,
        isAnimated: Bool = false,
        orientation: ImageOrientation? = nil
    ) {
        self.type = type
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.componentCount = componentCount
        self.hasAlpha = hasAlpha
        self.isProgressive = isProgressive
        self.frameCount = frameCount
        self.isAnimated = isAnimated
        self.orientation = orientation
    }

    /// The size in pixels, as stored.
    public var size: ImageSize { ImageSize(width: width, height: height) }

    public var description: String {
        var parts = ["\(type.name) \(width)×\(height)"]
        if let bitDepth { parts.append("\(bitDepth)-bit") }
        if let componentCount { parts.append(componentCount == 1 ? "1 component" : "\(componentCount) components") }
        if isProgressive { parts.append(type == .jpeg ? "progressive" : "interlaced") }
        if let frameCount { parts.append(frameCount == 1 ? "1 frame" : "\(frameCount) frames") } else if isAnimated { parts.append("animated") }
        return parts.joined(separator: ", ")
    }

    /// The outcome of ``ImageHeader/parse(_:)``.
    public enum ParseResult: Sendable, Hashable {
        /// The header was read.
        case parsed(ImageHeader)
        /// The data ends before the header does: call again with more bytes.
        case needsMoreData
        /// The format has no header parser, or the header is malformed; a decoder will say more.
        case unavailable
    }

    /// Reads the header at the start of `data`.
    ///
    /// Cheap and safe on any input: it only walks segment and box lengths, never decodes, and
    /// never reads past the end of `data`.
    /// - Parameter data: The first bytes of the file (all of them received so far).
    /// - Returns: The header, ``ParseResult/needsMoreData`` when `data` is a prefix too short
    ///   to contain it, or ``ParseResult/unavailable``.
    public static func parse(_ data: Data) -> ParseResult {
        guard let type = ImageType(data) else {
            return data.count < 12 ? .needsMoreData : .unavailable
        }
        return data.withUnsafeBytes { raw -> ParseResult in
            let bytes = Reader(raw.bindMemory(to: UInt8.self))
            switch type {
            case .jpeg: return parseJPEG(bytes)
            case .png: return parsePNG(bytes)
            case .gif: return parseGIF(bytes)
            case .webp: return parseWebP(bytes)
            case .heic, .heif, .avif: return parseISOBMFF(bytes, type: type)
            default: return .unavailable
            }
        }
    }

    /// Reads the header, or returns `nil` when it is incomplete, malformed or of a format
    /// without a parser.
    public init?(_ data: Data) {
        guard case .parsed(let header) = ImageHeader.parse(data) else { return nil }
        self = header
    }
}
