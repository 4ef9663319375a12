import NukeCore

extension ImageCodec {
    /// GIF, decoded and encoded with giflib: still and animated, interlaced, global and local
    /// colour tables, transparency, every disposal method, loop counts; frames decoded on
    /// demand (``NukeCore/ImageContainer/animation``) and a preview per frame while downloading.
    ///
    /// Linking the `NukeGIF` product registers it with ``ImageDecoderRegistry/shared`` and
    /// ``ImageEncoderRegistry/shared``; no call is needed.
    public static let gif = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeGIF",
            type: .gif,
            capabilities: [.decode, .encode, .progressive, .animation],
            library: "giflib",
            libraryVersion: GIFLibrary.version
        ),
        makeIncrementalDecoder: { context in
            ImageDecoders.GIF.isGIF(context.data)
                ? GIFIncrementalDecoder(context: context) : nil
        },
        makeDecoder: { context in ImageDecoders.GIF(data: context.data, context: context) },
        parseHeader: { ImageDecoders.GIF.parseHeader($0) },
        makeEncoder: { options in ImageEncoders.GIF(options: options) }
    )
}

/// Announces ``NukeCore/ImageCodec/gif`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeGIFRecord: ImageCodecs.Record = { ImageCodecs.announce(.gif) }
