#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeWebP's decoder plugin: the RIFF/WEBP signature, the incremental decoder and the header hook.
public enum WebPPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { WebPLibrary.codecName }

    /// Whether the data starts with `RIFF`, a size and `WEBP`.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        WebPContainer.hasSignature(data)
    }

    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        WebPIncrementalDecoder(context: context)
    }

    /// Reads the size, alpha and animation flag from the first chunk, in pure Swift.
    ///
    /// - Returns: `.parsed`, `.needsMoreData` before the first chunk's header is complete,
    ///   `.unavailable` for data that is not a WebP or whose first chunk is not `VP8 `, `VP8L`
    ///   or `VP8X`.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        WebPHeaderParser.parse(data)
    }
}

extension ImageDecoders {
    /// Decodes WebP with libwebp: lossy, lossless and alpha, still and animated, for complete
    /// files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/WebP``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeWebP", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: `.rgb8` for images without alpha, `.rgba8` with straight alpha as the file has it
    /// (premultiplied when `ImageDecodingContext.prefersPremultipliedAlpha` is set).
    /// The `VP8X` metadata is kept: the ICC profile in `Image.colorInfo`, EXIF in
    /// `Image.exif` with its orientation reported in `Image.orientation`
    /// (not applied), XMP in `Image.xmp`.
    ///
    /// Animated files: the first frame, composited on the canvas, is the container's image, and
    /// `ImageContainer.animation` decodes the others on demand, blended and disposed
    /// as browsers do, with the `ANIM` loop count (0 = forever) and background colour (reported,
    /// not painted). Frames that lie outside the canvas make the file corrupt, as in libwebp's
    /// demuxer.
    ///
    /// Progressive decoding: one libwebp incremental decoder (`WebPIDecoder`) serves the whole
    /// download and is given only the new bytes; `decodePartiallyDownloadedData(_:)` returns a
    /// preview whenever new rows are complete (`ImageContainer.UserInfoKey.rowCountKey`),
    /// or, for an animation, whenever a frame is complete (`scanNumberKey` = frames so far).
    ///
    /// Decode to size (`ImageDecodingContext.targetSize`): the core's resampler, after
    /// libwebp's own scaler has done the integer reduction for opaque images decoded in one call.
    ///
    /// Errors carry libwebp's status (`VP8_STATUS_BITSTREAM_ERROR`...). Limits are checked
    /// against the canvas and, as they arrive, every frame, before any pixel memory exists.
    ///
    /// The corresponding libwebp functions are `WebPDecode`, `WebPIDecode` and `WebPIAppend`.
    public typealias WebP = PluginImageDecoder<WebPPlugin>
}

extension ImageCodec {
    /// WebP, decoded and encoded with libwebp: lossy, lossless and alpha, still and animated,
    /// ICC/EXIF/XMP metadata, incremental decoding with a preview per group of new rows (or per
    /// frame), decode to size with libwebp's scaler and the resampler.
    public static let webp = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeWebP", type: .webp, capabilities: [.decode, .encode, .progressive, .scaledDecode, .animation],
            library: WebPLibrary.name, libraryVersion: WebPLibrary.version, nativeReductions: WebPStillDecoding.nativeReductions
        ),
        plugin: WebPPlugin.self,
        makeEncoder: { ImageEncoders.WebP(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/webp`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeWebPRecord: ImageCodecs.Record = { ImageCodecs.announce(.webp) }
