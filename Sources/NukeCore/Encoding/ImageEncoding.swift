#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes images.
///
/// An encoder implements the throwing `encode(_:) throws -> Data` (errors say why), or Nuke's
/// `encode(_:) -> Data?` returning `nil` on failure: each has a default made of the
/// other, so an encoder written for Nuke conforms as it is.
public protocol ImageEncoding: Sendable {
    /// Encodes an image.
    ///
    /// - Parameter image: The image; its ``Image/colorInfo`` ICC profile is embedded where
    ///   the format can carry one.
    /// - Returns: The encoded file.
    /// - Throws: ``ImageCodecError`` when the image cannot be encoded in this format.
    func encode(_ image: Image) throws -> Data

    /// Nuke's signature: the encoded file, or `nil` when the image cannot be encoded.
    @_disfavoredOverload
    func encode(_ image: PlatformImage) -> Data?

    /// Nuke's optional method for a container (with its original data): the default encodes
    /// the container's image.
    func encode(_ container: ImageContainer, context: ImageEncodingContext) -> Data?

    /// Encodes an image into `stream`, piece by piece as the file is produced.
    ///
    /// Encoders that stream natively (NukeJPEG, NukePNG) never hold the whole file in memory.
    /// The default implementation calls `encode(_:)` and writes its result, so every
    /// encoder supports this call.
    /// - Throws: ``ImageCodecError`` when the image cannot be encoded, or the stream's error;
    ///   after an error the stream holds a partial file.
    func encode(_ image: Image, to stream: inout some ImageOutputStream) throws
}

extension ImageEncoding {
    public func encode(_ image: Image) throws -> Data {
        let nukeStyle = (encode as (Image) -> Data?)(image)
        guard let nukeStyle else {
            throw ImageCodecError(.encodingFailed, stage: .encoding, codec: String(describing: Self.self), message: "the encoder returned no data")
        }
        return nukeStyle
    }

    @_disfavoredOverload
    public func encode(_ image: PlatformImage) -> Data? {
        try? (encode as (Image) throws -> Data)(image)
    }

    public func encode(_ container: ImageContainer, context: ImageEncodingContext) -> Data? {
        (encode as (Image) -> Data?)(container.image)
    }

    public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
        let data = try encode(image)
        try data.withUnsafeBytes { try stream.write($0) }
    }
}

/// Options for an encoder.
public struct ImageEncodingOptions: Sendable, Hashable {
    /// 0…1; lossy formats map it to their quality scale (JPEG 0–100). Default 0.8, as Nuke.
    public var quality: Double
    /// Write a progressive JPEG or an interlaced PNG.
    public var isProgressive: Bool
    /// JPEG: optimal Huffman tables for this image (libjpeg's `optimize_coding`, a second pass
    /// over the coefficients; a progressive JPEG always has them), a few per cent smaller.
    /// Default `false`, libjpeg's.
    public var optimizesCoding: Bool = false
    /// Lossless encoding where the format offers both (WebP, AVIF).
    public var isLossless: Bool
    /// zlib level 0–9 for PNG; `nil` for the codec's default.
    public var compressionLevel: Int?
    /// Keep 16 bits per channel where the format can (PNG); otherwise 8.
    public var prefersHighBitDepth: Bool
    /// Embed the image's ICC profile (when ``metadata`` keeps anything and the profile's colour
    /// space is the output's). Default `true`.
    public var preservesColorProfile: Bool
    /// Which EXIF, XMP and ICC data is written. Default ``ImageMetadataPolicy/all``; the CLI's
    /// and the service's thumbnails use ``ImageMetadataPolicy/display``.
    public var metadata: ImageMetadataPolicy = .all
    /// The colour transparent pixels are composited onto when the output format has no alpha
    /// (JPEG). Default white, as Pillow's and vips' flatten.
    public var background: RGBColor = .white
    /// The extension of the file being written (`"ppm"`), for a format whose variants share one
    /// type and are told apart by it (NukeNetpbm writes PAM for `pam`, PPM or PGM for `ppm`,
    /// `pgm` and `pnm`). Default `nil`: the format's own.
    public var filenameExtension: String?

    /// Creates options: by default quality 0.8, baseline, lossy, the codec's default compression
    /// level, 8 bits per channel, and all metadata kept.
    public init(
        quality: Double = 0.8,
        isProgressive: Bool = false,
        isLossless: Bool = false,
        compressionLevel: Int? = nil,
        prefersHighBitDepth: Bool = false,
        preservesColorProfile: Bool = true,
        metadata: ImageMetadataPolicy = .all,
        background: RGBColor = .white
    ) {
        self.quality = quality
        self.isProgressive = isProgressive
        self.isLossless = isLossless
        self.compressionLevel = compressionLevel
        self.prefersHighBitDepth = prefersHighBitDepth
        self.preservesColorProfile = preservesColorProfile
        self.metadata = metadata
        self.background = background
    }
}

/// An opaque 8-bit sRGB colour.
public struct RGBColor: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0–255.
    public var red: UInt8
    /// Green, 0–255.
    public var green: UInt8
    /// Blue, 0–255.
    public var blue: UInt8

    /// Creates a colour from its 8-bit components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Parses `#rrggbb`, `rrggbb`, or the names `white` and `black`.
    public init?(_ text: String) {
        switch text.lowercased() {
        case "white": self = .white
        case "black": self = .black
        default:
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
            self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
        }
    }

    /// White.
    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    /// Black.
    public static let black = RGBColor(red: 0, green: 0, blue: 0)

    public var description: String {
        "#" + [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// An encoder that writes its file as a decode hands over the rows (``ImageRowSink``), so that a
/// decode into a file never holds the image whole (`nuke convert X.jpg out.pam` with NukeNetpbm:
/// ``ImageDecoderRegistry/decode(_:reading:rowsTo:)`` into this sink).
public protocol ImageRowEncoding: ImageEncoding {
    /// A sink that writes the header at ``ImageRowSink/begin(width:height:pixelFormat:alphaMode:)``
    /// and each batch of rows as it comes into `stream`. A failure of the stream ends the decode
    /// with `.internalFailure` naming the stream's error.
    func rowSink<Stream: ImageOutputStream & AnyObject>(writingTo stream: Stream) -> any ImageRowSink
}
