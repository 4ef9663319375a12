import NukeCore

extension ImageCodec {
    /// JPEG through libjpeg-turbo: decoding (baseline, progressive, arithmetic, gray, CMYK),
    /// progressive previews, DCT-scaled decoding and encoding.
    public static let jpeg = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeJPEG", type: .jpeg,
            capabilities: [.decode, .encode, .progressive, .scaledDecode],
            library: "libjpeg-turbo", libraryVersion: JPEGLibrary.version, priority: 0
        ),
        makeIncrementalDecoder: { context in
            ImageDecoders.JPEG.isJPEG(context.data, context: context) ? JPEGIncrementalDecoder(context: context) : nil
        },
        makeDecoder: { context in ImageDecoders.JPEG.make(context) },
        parseHeader: { ImageDecoders.JPEG.parseHeader($0) },
        makeEncoder: { ImageEncoders.JPEG(options: $0) }
    )
}

/// Announces ``ImageCodec/jpeg`` to ``ImageCodecs/linked``: linking NukeJPEG is enough.
@section("nuke_codecs") @used
let nukeJPEGRecord: ImageCodecs.Record = { ImageCodecs.announce(.jpeg) }
