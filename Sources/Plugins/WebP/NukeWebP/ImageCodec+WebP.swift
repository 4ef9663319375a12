import NukeCore

extension ImageCodec {
    /// WebP, decoded and encoded with libwebp: lossy, lossless and alpha, still and animated,
    /// ICC/EXIF/XMP metadata, incremental decoding with a preview per group of new rows (or per
    /// frame), decode to size through the core's resampler.
    ///
    /// Linking the `NukeWebP` product registers it with ``ImageDecoderRegistry/shared`` and
    /// ``ImageEncoderRegistry/shared``; no call is needed.
    public static let webp = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeWebP",
            type: .webp,
            capabilities: [.decode, .encode, .progressive, .scaledDecode, .animation],
            library: "libwebp",
            libraryVersion: WebPLibrary.version
        ),
        makeIncrementalDecoder: { context in
            WebPContainer.hasSignature(context.data) ? WebPIncrementalDecoder(context: context) : nil
        },
        makeDecoder: { context in ImageDecoders.WebP(data: context.data, context: context) },
        parseHeader: { ImageDecoders.WebP.parseHeader($0) },
        makeEncoder: { options in ImageEncoders.WebP(options: options) }
    )
}

/// Announces ``NukeCore/ImageCodec/webp`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeWebPRecord: ImageCodecs.Record = { ImageCodecs.announce(.webp) }
