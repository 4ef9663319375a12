#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeTIFF's decoder plugin: TIFF and BigTIFF, decoded whole by libtiff.
public enum TIFFPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { TIFFLibrary.codecName }

    /// Whether the data starts with a TIFF or BigTIFF signature, in either byte order.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        hasSignature(data)
    }

    /// `II*\0` or `MM\0*` (BigTIFF: 43 for 42), the sniffer's test for ``NukeCore/ImageType/tiff``.
    static func hasSignature(_ data: Data) -> Bool {
        let b = [UInt8](data.prefix(4))
        guard b.count == 4 else { return false }
        return (b[0] == 0x49 && b[1] == 0x49 && (b[2] == 0x2A || b[2] == 0x2B) && b[3] == 0)
            || (b[0] == 0x4D && b[1] == 0x4D && b[2] == 0 && (b[3] == 0x2A || b[3] == 0x2B))
    }

    /// Decodes the complete file: a TIFF's directories may be anywhere in it. Given a
    /// `ImageDecodingContext.file`, it reads the file from there, a directory or strip at a time,
    /// and `bytes` are only its start.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try TIFFDecoding(context: context).decode(bytes)
    }

    /// Reads the first directory's size, samples and orientation, and counts the pages.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        TIFFHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes TIFF and BigTIFF with libtiff.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/TIFF``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeTIFF", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Reads strips and tiles, contiguous and planar samples, every compression libtiff is built
    /// with (none, LZW, Deflate, PackBits, JPEG, CCITT fax, and more), 1-, 2-, 4-, 8- and 16-bit
    /// gray and palette, 8- and 16-bit RGB, alpha (associated or not) and other extra samples
    /// (skipped). YCbCr (JPEG-compressed: libtiff's JPEG codec converts it), CIE L*a*b* and the
    /// rest go through libtiff's RGBA reader. Output: `.gray8`, `.grayAlpha8`, `.rgb8` or
    /// `.rgba8`, and 16 bits per sample for 16-bit files when
    /// `ImageDecodingContext.prefersHighBitDepth` is set.
    ///
    /// CMYK goes through the colour manager (NukeColor, when linked) with the file's ICC
    /// profile, to `ImageDecodingContext.colorConversion` or sRGB; without one the
    /// decode fails with `.unsupported`, never with a naive formula's colours.
    ///
    /// The Orientation tag is reported in `Image.orientation`, not applied (the
    /// core's output stage applies it when asked); the ICC profile is in
    /// `Image.colorInfo`. A multi-page file decodes its first page, or the one
    /// ``NukeCore/ImageDecodingContext/tiffPageOption`` names; `userInfo[.tiffPageCountKey]` says
    /// how many there are (``TIFFPages`` reads them all).
    ///
    /// Decode to size streams: libtiff decodes a scanline, a strip or a row of tiles at a time
    /// into the core's resampler, so a 20,000 × 20,000 scan becomes a thumbnail in memory for
    /// one band and the thumbnail. No progressive decoding: libtiff needs the whole file.
    ///
    /// The corresponding libtiff functions are `TIFFReadScanline`, `TIFFReadEncodedStrip`,
    /// `TIFFReadTile` and `TIFFRGBAImageGet`.
    public typealias TIFF = PluginImageDecoder<TIFFPlugin>
}

extension TIFFPlugin {
    /// The page of how many, the compression, the photometric interpretation, the bits per sample,
    /// and tiles or strips of a decode (`nuke info`).
    @Sendable static func details(_ userInfo: [ImageContainer.UserInfoKey: any Sendable]) -> ImageFormatDetails? {
        guard let compression = userInfo[.tiffCompressionKey] as? String else { return nil }
        let page = userInfo[.tiffPageKey] as? Int, pages = userInfo[.tiffPageCountKey] as? Int
        let photometric = userInfo[.tiffPhotometricKey] as? String, bits = userInfo[.tiffBitsPerSampleKey] as? Int
        let tiled = userInfo[.tiffTiledKey] as? Bool
        var parts: [String] = []
        if let page { parts.append("page \(page + 1)" + (pages.map { " of \($0)" } ?? "")) }
        parts.append(compression)
        if let photometric { parts.append(photometric) }
        if let bits { parts.append("\(bits) bits per sample") }
        parts.append(tiled == true ? "tiles" : "strips")
        return ImageFormatDetails(name: "TIFF", summary: parts.joined(separator: ", "), fields: [
            ("page", page), ("pages", pages), ("compression", compression), ("photometric", photometric),
            ("bitsPerSample", bits), ("tiled", tiled),
        ])
    }
}

extension ImageType {
    /// TIFF and BigTIFF (`public.tiff`), sniffed once NukeTIFF's codec is registered.
    public static let tiff: ImageType = "public.tiff"
}

extension ImageCodec {
    /// TIFF through libtiff.
    public static let tiff: ImageCodec = {
        ImageType.register(.tiff, name: "TIFF", filenameExtensions: ["tif", "tiff"]) { TIFFPlugin.hasSignature($0) }
        var codec = ImageCodec(
            info: ImageCodecInfo(
                name: "NukeTIFF", type: .tiff, capabilities: [.decode, .encode, .scaledDecode, .highBitDepth, .readsFiles],
                library: TIFFLibrary.name, libraryVersion: TIFFLibrary.version
            ),
            plugin: TIFFPlugin.self,
            makeEncoder: { ImageEncoders.TIFF(options: $0) }
        )
        codec.decodingOptions = [
            ImageDecodingOption(name: "page", key: ImageDecodingContext.tiffPageOption,
                                summary: "the page of a multi-page TIFF to decode, from 1 (default 1)") { text in
                Int(text).flatMap { $0 >= 1 ? $0 - 1 : nil }
            },
        ]
        codec.describe = TIFFPlugin.details
        return codec
    }()
}

/// Announces ``NukeCore/ImageCodec/tiff`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeTIFFRecord: ImageCodecs.Record = { ImageCodecs.announce(.tiff) }

/// The pages of a multi-page TIFF (a scan, a fax), each decoded on its own: pages, not an
/// animation's frames.
///
/// ```swift
/// let pages = try TIFFPages(data)
/// for index in 0..<pages.count { let page = try pages.decode(page: index) }
/// ```
public struct TIFFPages: Sendable {
    /// The file.
    public let data: Data
    /// The number of pages.
    public let count: Int
    private let context: ImageDecodingContext

    /// Reads the directories' chain.
    ///
    /// - Parameters:
    ///   - data: The whole TIFF file.
    ///   - context: The limits, target size and other options every page decodes with.
    /// - Throws: `ImageCodecError` when this is not a TIFF whose directories are all in the data.
    public init(_ data: Data, context: ImageDecodingContext? = nil) throws(ImageCodecError) {
        guard case .parsed(let header) = TIFFHeaderParser.parse(data), let count = header.frameCount else {
            throw TIFFLibrary.error(.corrupt, .header, "not a TIFF file whose directories are all in the data")
        }
        self.data = data
        self.count = count
        self.context = context ?? ImageDecodingContext(data: data)
    }

    /// Decodes page `index` (0-based), through the same output stage as any decode.
    public func decode(page index: Int) throws -> ImageContainer {
        var context = self.context
        context.data = data
        context.isCompleted = true
        context.type = .tiff
        context.userInfo[ImageDecodingContext.tiffPageOption] = index
        return try ImageDecoderRegistry.shared.decode(context)
    }
}
