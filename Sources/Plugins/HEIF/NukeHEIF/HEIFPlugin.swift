#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeHEIF's decoder plugin: HEIC, HEIF and AVIF files, decoded whole by libheif.
public enum HEIFPlugin: WholeFileDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { HEIFLibrary.codecName }

    /// Whether the `ftyp` box names a HEIC, HEIF or AVIF brand.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        guard let type = ImageType(data) else { return false }
        return type == .heic || type == .heif || type == .avif
    }

    /// Decodes the complete file: libheif needs all of it.
    public static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer {
        try HEIFDecoding(context: context).decode(bytes)
    }

    /// Reads the primary image's size (`ispe`, turned by `irot`) and bit depth (`pixi`) from the
    /// `meta` box, in pure Swift: the core checks the limits on it before libheif, or the helper
    /// an isolated decode runs in, sees a byte.
    ///
    /// - Returns: `.parsed`; `.needsMoreData` until the `meta` box is complete; `.unavailable`
    ///   for data that is not HEIF or whose `meta` box names no primary image with a size.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        guard let type = ImageType(data) else { return data.count < 12 ? .needsMoreData : .unavailable }
        guard type == .heic || type == .heif || type == .avif else { return .unavailable }
        return HEIFItemGraph.header(data, type: type)
    }
}

extension ImageDecoders {
    /// Decodes HEIC, HEIF and AVIF with libheif (libde265 for HEVC, dav1d or aom for AV1).
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/HEIF``) for HEIC, HEIF and AVIF with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeHEIF", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: the primary image with the file's transformations (`irot`, `imir`, `clap`)
    /// applied once, grid images assembled, `.rgb8`/`.rgba8` (straight alpha), or 16 bits per
    /// sample for 10- and 12-bit files when `ImageDecodingContext.prefersHighBitDepth`
    /// is set (samples scaled to the full 16-bit range). Because libheif has already rotated the
    /// pixels, `Image.orientation` is `.up`; the EXIF block is kept in
    /// `Image.exif` but its orientation is not reported, so it is never applied twice.
    /// The ICC profile is in `Image.colorInfo`; an `nclx` description is in
    /// `userInfo[.heifNCLXKey]`. The brand, bit depth, number of images and thumbnails are in
    /// `userInfo` too (`nuke info` prints them).
    ///
    /// Decode to size uses an embedded thumbnail when one covers the core plan's native floor
    /// (twice the final size, or the final size with `prefersFastScaling`), then the core's
    /// resampler. No progressive decoding: libheif needs the whole file.
    ///
    /// libheif 1.15.1 crashes on some hostile files (Docs/Isolation.md): decode untrusted files through
    /// NukeIsolation, which isolates HEIF by default.
    ///
    /// The corresponding libheif functions are `heif_context_read_from_memory_without_copy` and
    /// `heif_decode_image`.
    public typealias HEIF = PluginImageDecoder<HEIFPlugin>
}

extension HEIFPlugin {
    /// The brand, the coded bit depth, the top-level images and thumbnails, and the nclx colour
    /// of a decode (`nuke info`).
    @Sendable static func details(_ userInfo: [ImageContainer.UserInfoKey: any Sendable]) -> ImageFormatDetails? {
        guard let depth = userInfo[.heifBitDepthKey] as? Int else { return nil }
        let brand = userInfo[.heifBrandKey] as? String, images = userInfo[.heifImageCountKey] as? Int
        let thumbnails = userInfo[.heifThumbnailCountKey] as? Int, nclx = userInfo[.heifNCLXKey] as? [Int]
        var parts = ["brand \(brand ?? "?")", "\(depth)-bit"]
        if let images { parts.append("\(images) top-level image\(images == 1 ? "" : "s")") }
        if let thumbnails { parts.append("\(thumbnails) thumbnail\(thumbnails == 1 ? "" : "s")") }
        if let nclx { parts.append("nclx \(nclx.map(String.init).joined(separator: "/"))") }
        return ImageFormatDetails(name: "HEIF", summary: parts.joined(separator: ", "), fields: [
            ("brand", brand), ("bitDepth", depth), ("images", images), ("thumbnails", thumbnails), ("nclx", nclx),
        ])
    }
}

extension ImageCodec {
    /// HEIC through libheif (libde265, or FFmpeg's libavcodec for large images).
    public static let heic = heifCodec(.heic)
    /// HEIF through libheif.
    public static let heif = heifCodec(.heif)
    /// AVIF through libheif (dav1d or aom).
    public static let avif = heifCodec(.avif)

    private static func heifCodec(_ type: ImageType) -> ImageCodec {
        var codec = ImageCodec(
            info: ImageCodecInfo(
                name: "NukeHEIF", type: type, capabilities: [.decode, .encode, .scaledDecode, .highBitDepth],
                library: HEIFLibrary.name,
                libraryVersion: type == .avif || HEIFLibrary.hevcDecoder.isEmpty
                    ? HEIFLibrary.version : "\(HEIFLibrary.version) (HEVC: \(HEIFLibrary.hevcDecoder))",
                nativeReductions: .embedded
            ),
            plugin: HEIFPlugin.self,
            makeEncoder: { ImageEncoders.HEIF(format: type, options: $0) }
        )
        codec.describe = HEIFPlugin.details
        return codec
    }
}

/// Announces HEIC, HEIF and AVIF to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeHEIFRecord: ImageCodecs.Record = {
    ImageCodecs.announce(.heic)
    ImageCodecs.announce(.heif)
    ImageCodecs.announce(.avif)
}
