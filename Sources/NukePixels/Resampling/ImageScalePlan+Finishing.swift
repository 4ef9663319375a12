import NukeCore

/// The last stage of a decode to size: what a codec made, resampled to the plan's final size.
extension ImageScalePlan {
    /// `bitmap` — the image, or a codec's reduction of it — resampled to the final size; itself
    /// when it is that size already, or a pixel short of it on one side (a codec's rounding:
    /// nothing is enlarged).
    ///
    /// - Parameters:
    ///   - bitmap: The decoded image, at the codec's reduction or full size.
    ///   - scale: The codec's reduction, when it rounds the size up (JPEG's N/8: the
    ///   bitmap covers `originalSize` × `scale` of its pixels, the last row or column only in
    ///   part); the resampler maps the final size onto that box, as Pillow's `thumbnail` does.
    public func finish(_ bitmap: Bitmap, scale: Double? = nil) -> Bitmap {
        guard bitmap.width > finalSize.width || bitmap.height > finalSize.height,
              bitmap.width >= finalSize.width, bitmap.height >= finalSize.height else { return bitmap }
        return bitmap.resized(to: finalSize, sourceExtent: scale.map(extent))
    }

    /// A resampler from `source` (the image, or a codec's reduction of it by `scale`, as in
    /// ``finish(_:scale:)``) to the final size, for a decoder that produces rows in order; `nil`
    /// when `source` is the final size already.
    public func resampler(from source: ImageSize, pixelFormat: PixelFormat, alphaMode: AlphaMode, scale: Double? = nil) -> ImageResampler? {
        guard source != finalSize, source.width >= finalSize.width, source.height >= finalSize.height else { return nil }
        return ImageResampler(sourceWidth: source.width, sourceHeight: source.height, pixelFormat: pixelFormat, alphaMode: alphaMode,
                              targetWidth: finalSize.width, targetHeight: finalSize.height, sourceExtent: scale.map(extent))
    }

    /// The part of a reduction by `scale` that covers the image, in its own pixels.
    private func extent(_ scale: Double) -> (width: Double, height: Double) {
        (Double(originalSize.width) * scale, Double(originalSize.height) * scale)
    }
}
