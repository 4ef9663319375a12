import NukeCore

extension ImageCodec {
    /// HEIC with libheif: HEVC decode (8-bit with FFmpeg's libavcodec when it is installed, else
    /// and beyond 8 bits libde265) and encode (x265), decode to size from an embedded thumbnail,
    /// 10/12-bit as 16-bit on request. No progressive decoding.
    ///
    /// Linking the `NukeHEIF` product registers HEIC, HEIF and AVIF with
    /// ``ImageDecoderRegistry/shared`` and ``ImageEncoderRegistry/shared``; no call is needed.
    public static let heic = heifCodec(.heic)
    /// HEIF files whose brands are not HEVC-specific (`mif1`, `msf1`): decoded with libheif,
    /// encoded as HEVC.
    public static let heif = heifCodec(.heif)
    /// AVIF with libheif: AV1 decode (dav1d or aom) and encode (aom).
    public static let avif = heifCodec(.avif)

    private static func heifCodec(_ type: ImageType) -> ImageCodec {
        ImageCodec(
            info: ImageCodecInfo(
                name: "NukeHEIF",
                type: type,
                capabilities: [.decode, .encode, .scaledDecode, .highBitDepth],
                library: "libheif",
                libraryVersion: type == .avif || HEIFLibrary.hevcDecoder.isEmpty
                    ? HEIFLibrary.version : "\(HEIFLibrary.version) (HEVC: \(HEIFLibrary.hevcDecoder))"
            ),
            makeIncrementalDecoder: { context in
                ImageDecoders.HEIF.isHEIF(context.data) ? HEIFDecoding.incremental(context) : nil
            },
            makeDecoder: { context in ImageDecoders.HEIF(data: context.data, context: context) },
            makeEncoder: { options in ImageEncoders.HEIF(format: type, options: options) }
        )
    }
}

/// Announces HEIC, HEIF and AVIF to the registries from the `nuke_codecs` section.
@section("nuke_codecs") @used
let nukeHEIFRecord: ImageCodecs.Record = {
    ImageCodecs.announce(.heic)
    ImageCodecs.announce(.heif)
    ImageCodecs.announce(.avif)
}
