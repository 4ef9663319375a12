extension ImageResampler {
    /// The size to resample an image of `source` size to, for a display `target`.
    ///
    /// Keeps the aspect ratio (each side rounded to the nearest pixel, at least 1) and never
    /// upscales: when the source is already within the target (``ImageDecodingContext/ContentMode/aspectFit``)
    /// or either side would have to grow (``ImageDecodingContext/ContentMode/aspectFill``), the
    /// result is `source`.
    ///
    /// - Parameters:
    ///   - source: The image's size; each side at least 1.
    ///   - target: The size the image is displayed at; each side at least 1.
    ///   - contentMode: `.aspectFit`: the result fits inside `target` (one side equal to it);
    ///     `.aspectFill`: both sides are at least the target's (one side equal to it).
    /// - Returns: A size no larger than `source` in either dimension.
    public static func targetSize(
        for source: ImageSize, fitting target: ImageSize, contentMode: ImageDecodingContext.ContentMode
    ) -> ImageSize {
        precondition(source.width > 0 && source.height > 0, "ImageResampler: empty source size \(source)")
        precondition(target.width > 0 && target.height > 0, "ImageResampler: empty target size \(target)")
        let sx = Double(target.width) / Double(source.width)
        let sy = Double(target.height) / Double(source.height)
        let fit = contentMode == .aspectFit
        let scale = fit ? min(sx, sy) : max(sx, sy)
        guard scale < 1 else { return source }
        // The side that sets the scale gets the target's size exactly; the other is rounded.
        func side(_ length: Int, _ targetLength: Int, _ sideScale: Double) -> Int {
            if sideScale == scale { return min(length, targetLength) }
            let scaled = max(1, Int((Double(length) * scale).rounded()))
            // Rounding may not cross the target: fit stays inside, fill stays covering.
            return fit ? min(scaled, targetLength) : min(length, max(scaled, targetLength))
        }
        return ImageSize(width: side(source.width, target.width, sx), height: side(source.height, target.height, sy))
    }
}
