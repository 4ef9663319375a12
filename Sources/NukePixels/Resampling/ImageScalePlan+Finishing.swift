import NukeCore

/// The last stage of a decode to size: what a codec made, resampled to the plan's final size.
extension ImageScalePlan {
    /// `bitmap` — the image, or a codec's reduction of it — resampled to the final size; itself
    /// when it is that size already, or a pixel short of it on one side (a codec's rounding:
    /// nothing is enlarged).
    public func finish(_ bitmap: Bitmap) -> Bitmap {
        guard bitmap.width > finalSize.width || bitmap.height > finalSize.height,
              bitmap.width >= finalSize.width, bitmap.height >= finalSize.height else { return bitmap }
        return bitmap.resized(to: finalSize)
    }

    /// A resampler from `source` (the image, or a codec's reduction of it) to the final size, for
    /// a decoder that produces rows in order; `nil` when `source` is the final size already.
    public func resampler(from source: ImageSize, pixelFormat: PixelFormat, alphaMode: AlphaMode) -> ImageResampler? {
        guard source != finalSize, source.width >= finalSize.width, source.height >= finalSize.height else { return nil }
        return ImageResampler(sourceWidth: source.width, sourceHeight: source.height, pixelFormat: pixelFormat, alphaMode: alphaMode,
                              targetWidth: finalSize.width, targetHeight: finalSize.height)
    }
}
