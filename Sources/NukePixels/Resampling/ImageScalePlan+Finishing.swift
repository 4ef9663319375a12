import NukeCore

/// Announces NukePixels' resampler (`Bitmap.resized(to:sourceExtent:)`, which `ImageScalePlan.finish(_:scale:)` calls)
/// to the core from the `nuke_codecs` section, so that every decode to size is finished with it.
@section("nuke_codecs") @used
let nukePixelsRecord: ImageCodecs.Record = {
    ImageResizing.announce({ $0.resized(to: $1, sourceExtent: $2) }) { source, pixelFormat, alphaMode, size, extent in
        ImageResampler(sourceWidth: source.width, sourceHeight: source.height, pixelFormat: pixelFormat, alphaMode: alphaMode,
                       targetWidth: size.width, targetHeight: size.height, sourceExtent: extent)
    }
}

extension ImageResampler: ImageRowResampling {}
