import NukeCore
@section("nuke_codecs") @used
let nukeJPEGRecord: ImageCodecs.Record = {
    ImageCodecs.announce(ImageCodec(info: ImageCodecInfo(name: "NukeJPEG", type: .jpeg, capabilities: .decode)))
}
