#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// NukeGIF's decoder plugin: the GIF signature, the incremental decoder and the header hook.
public enum GIFPlugin: ImageDecoderPlugin {
    /// The codec the core's errors name (its limit and cancellation checks).
    public static var codecName: String? { GIFLibrary.codecName }

    /// Whether the data starts with `GIF87a` or `GIF89a`.
    public static func accepts(_ data: Data, context: ImageDecodingContext) -> Bool {
        hasSignature(data)
    }

    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        GIFIncrementalDecoder(context: context)
    }

    /// Reads the logical screen size.
    public static func parseHeader(_ data: Data) -> ImageHeader.ParseResult {
        GIFHeaderParser.parse(data)
    }

    static func hasSignature(_ data: Data) -> Bool {
        data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8))
    }
}

extension ImageDecoders {
    /// Decodes GIF with giflib: still and animated, for complete files and downloads alike.
    ///
    /// Add the product to an app's `Package.swift`; linking it registers the decoder (and
    /// ``ImageEncoders/GIF``) with the shared registries:
    ///
    /// ```swift
    /// .target(name: "MyApp", dependencies: [
    ///     .product(name: "NukeGIF", package: "NukeCodecs"),
    /// ])
    /// ```
    ///
    /// Output: `.rgba8` with straight alpha, the size of the logical screen. `decode(_:)`
    /// decodes only the first frame, composited on the screen, as the container's image; an
    /// animated file (more than one image) also gets `ImageContainer.animation`,
    /// which decodes the other frames on demand, composited as browsers do (disposal to
    /// background clears to transparent; frames larger than or outside the screen are clipped),
    /// with each frame's delay as stored (`AnimationFrameInfo.browserDuration` gives
    /// what browsers show) and the NETSCAPE2.0 loop count as stored (0 = forever; 1 when the
    /// file has none). Interlaced frames, global and local colour tables and the graphics control
    /// extension's transparency are handled by giflib and the shim.
    ///
    /// Progressive decoding: `decodePartiallyDownloadedData(_:)` yields a preview as soon as
    /// the first frame's bytes are all there, then one per further frame (the canvas after it;
    /// `ImageContainer.UserInfoKey.frameCountKey` and `scanNumberKey` = frames
    /// complete). Bytes are scanned once and each frame is decoded once.
    ///
    /// Errors: data that ends inside a block is `.incomplete`; a zero-size screen, a bad
    /// signature or a file without images is `.corrupt`; giflib's errors (`D_GIF_ERR_*`) keep its
    /// message. giflib has no limits of its own: the screen size, every frame's size, the frame
    /// count and the bytes compositing needs are checked against `ImageLimits` after the
    /// header and before any pixel memory exists. LZW data that ends early inside a complete
    /// frame is shown as far as it goes, as browsers do, and counted as a warning.
    ///
    /// The corresponding giflib functions are `DGifOpen`, `DGifGetImageDesc` and `DGifGetLine`.
    public typealias GIF = PluginImageDecoder<GIFPlugin>
}

extension ImageCodec {
    /// GIF, decoded and encoded with giflib: still and animated, interlaced, with a preview per
    /// group of new rows (or per frame), frames decoded on demand and composited as browsers do.
    public static let gif = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeGIF", type: .gif, capabilities: [.decode, .encode, .progressive, .animation],
            library: GIFLibrary.name, libraryVersion: GIFLibrary.version
        ),
        plugin: GIFPlugin.self,
        makeEncoder: { ImageEncoders.GIF(options: $0) }
    )
}

/// Announces ``NukeCore/ImageCodec/gif`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeGIFRecord: ImageCodecs.Record = { ImageCodecs.announce(.gif) }
