import NukeCore

extension ImageCodec {
    /// PNG, decoded and encoded with libpng: every colour type and bit depth, Adam7
    /// interlacing with a preview per pass, 16-bit samples on request, ICC, gamma, sRGB
    /// intent and EXIF orientation.
    ///
    /// Linking the `NukePNG` product registers it with ``ImageDecoderRegistry/shared`` and
    /// ``ImageEncoderRegistry/shared``; no call is needed.
    public static let png = ImageCodec(
        info: ImageCodecInfo(
            name: "NukePNG",
            type: .png,
            capabilities: [.decode, .encode, .progressive, .highBitDepth],
            library: "libpng",
            libraryVersion: LibPNG.version
        ),
        makeIncrementalDecoder: { context in
            ImageDecoders.PNG.isPNG(context.data) ? PNGIncrementalDecoder(context: context) : nil
        },
        makeDecoder: { context in ImageDecoders.PNG(data: context.data, context: context) },
        parseHeader: { ImageDecoders.PNG.parseHeader($0) },
        makeEncoder: { options in ImageEncoders.PNG(options: options) }
    )
}

/// Announces ``NukeCore/ImageCodec/png`` to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukePNGRecord: ImageCodecs.Record = { ImageCodecs.announce(.png) }
