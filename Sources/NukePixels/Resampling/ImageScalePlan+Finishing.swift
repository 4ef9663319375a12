import NukeCore

/// The last stage of a decode to size: what a codec made, resampled to the plan's final size.
extension ImageScalePlan {
    /// A resampler from `source` (the image, or a codec's reduction of it by `scale`, as in
    /// `finish(_:scale:)`) to the final size, for a decoder that produces rows in order; `nil`
    /// when `source` is the final size already.
    public func resampler(from source: ImageSize, pixelFormat: PixelFormat, alphaMode: AlphaMode, scale: Double? = nil) -> ImageResampler? {
        guard source != finalSize, source.width >= finalSize.width, source.height >= finalSize.height else { return nil }
        return ImageResampler(sourceWidth: source.width, sourceHeight: source.height, pixelFormat: pixelFormat, alphaMode: alphaMode,
                              targetWidth: finalSize.width, targetHeight: finalSize.height, sourceExtent: scale.map(sourceExtent))
    }
}

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
