#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an image file's header says, read before any decoder is created.
///
/// Each codec provides its format's header hook (``ImageCodec/parseHeader``,
/// ``ImageDecoderRegistering/parseHeader(_:)``): NukeJPEG reads the `SOF` (skipping `APPn`
/// segments of any size), NukePNG the `IHDR` and `acTL`. ``parse(_:registry:)`` asks the hooks of
/// the registered codecs, so a caller learns the size and chooses a target size before any pixel
/// memory is allocated — for third-party formats too.
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
    /// `true` for a vector image (SVG): ``width`` × ``height`` is its intrinsic size, and a decode
    /// to size renders it at the size that fits or fills the target, larger than the intrinsic
    /// size too (``ImageSize/rendered(width:height:for:contentMode:)``). The limits then hold the
    /// render size, not the intrinsic one.
    public var isScalable = false

    /// Creates a header; a format's header hook fills what it read and leaves the rest at its default.
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

    /// The bytes of the image this header declares, as a decoder builds it: 4 a pixel up to 8
    /// bits a sample, 8 beyond or when the header does not say; `Int.max` when that overflows.
    /// What a caller budgets for a decode before it starts (an isolated helper's allocations, an
    /// upload decoded as it arrives).
    public var declaredImageBytes: Int {
        let (pixels, pixelOverflow) = width.multipliedReportingOverflow(by: height)
        let (bytes, bytesOverflow) = pixels.multipliedReportingOverflow(by: (bitDepth ?? 16) > 8 ? 8 : 4)
        return pixelOverflow || bytesOverflow ? .max : bytes
    }

    public var description: String {
        var parts = ["\(type.name) \(width)×\(height)"]
        if let bitDepth { parts.append("\(bitDepth)-bit") }
        if let componentCount { parts.append(componentCount == 1 ? "1 component" : "\(componentCount) components") }
        if isProgressive { parts.append(type == .jpeg ? "progressive" : "interlaced") }
        if let frameCount { parts.append(frameCount == 1 ? "1 frame" : "\(frameCount) frames") } else if isAnimated { parts.append("animated") }
        return parts.joined(separator: ", ")
    }

    /// The outcome of ``ImageHeader/parse(_:registry:)``.
    public enum ParseResult: Sendable, Hashable {
        /// The header was read.
        case parsed(ImageHeader)
        /// The data ends before the header does: call again with more bytes.
        case needsMoreData
        /// The format has no header parser, or the header is malformed; a decoder will say more.
        case unavailable
    }

    /// Reads the header at the start of `data` with the registry's header hooks.
    ///
    /// Cheap and safe on any input: hooks only walk segment and chunk lengths, never decode,
    /// and never read past the end of `data`.
    /// - Parameters:
    ///   - data: The first bytes of the file (all of them received so far).
    ///   - registry: Whose codecs' hooks to ask. Default: ``ImageDecoderRegistry/shared``.
    /// - Returns: The header, ``ParseResult/needsMoreData`` when `data` is a prefix too short
    ///   to contain it, or ``ParseResult/unavailable``.
    public static func parse(_ data: Data, registry: ImageDecoderRegistry = .shared) -> ParseResult {
        registry.parseHeader(data)
    }

    /// Reads the header, or returns `nil` when it is incomplete, malformed or of a format
    /// without a parser.
    public init?(_ data: Data, registry: ImageDecoderRegistry = .shared) {
        guard case .parsed(let header) = registry.parseHeader(data) else { return nil }
        self = header
    }
}
