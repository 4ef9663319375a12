import NukeCore
@section("nuke_codecs") @used
let nukePNGRecord: ImageCodecs.Record = {
    ImageCodecs.announce(ImageCodec(info: ImageCodecInfo(name: "NukePNG", type: .png, capabilities: .decode)))
}
