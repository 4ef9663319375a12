import NukeCore

extension ImageCodec {
    /// SVG and SVGZ rendered with librsvg and cairo at the size asked for. No encoder.
    ///
    /// Linking the `NukeSVG` product registers it with ``ImageDecoderRegistry/shared``, and makes
    /// the core sniff gzip-compressed SVG as SVG (from the registry's first use, or this value's);
    /// no call is needed.
    public static let svg: ImageCodec = {
        ImageType.register(.svg, name: "SVG", filenameExtensions: ["svg", "svgz"]) { ImageDecoders.SVG.isSVGZ($0) }
        return svgCodec
    }()

    private static let svgCodec = ImageCodec(
        info: ImageCodecInfo(
            name: "NukeSVG",
            type: .svg,
            capabilities: [.decode, .scaledDecode],
            library: "librsvg",
            libraryVersion: SVGLibrary.version
        ),
        makeIncrementalDecoder: { context in
            ImageDecoders.SVG.isSVG(context.data) ? SVGRendering.incremental(context) : nil
        },
        makeDecoder: { context in ImageDecoders.SVG(data: context.data, context: context) }
    )
}

/// Announces ``NukeCore/ImageCodec/svg`` (which teaches the core to sniff SVGZ).
@section("nuke_codecs") @used
let nukeSVGRecord: ImageCodecs.Record = { ImageCodecs.announce(.svg) }
