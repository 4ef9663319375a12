extension ImageSize {
    /// The size to reduce an image of this size to, for a display `target`: the final size of
    /// every decode to size (``ImageScalePlan``) and of `Bitmap.resized(toFit:contentMode:)`.
    ///
    /// Keeps the aspect ratio (each side rounded to the nearest pixel, at least 1) and never
    /// upscales: when the source is already within the target (``ImageDecodingContext/ContentMode/aspectFit``)
    /// or either side would have to grow (``ImageDecodingContext/ContentMode/aspectFill``), the
    /// result is this size.
    ///
    /// - Parameters:
    ///   - target: The size the image is displayed at; each side at least 1.
    ///   - contentMode: `.aspectFit`: the result fits inside `target` (one side equal to it);
    ///     `.aspectFill`: both sides are at least the target's (one side equal to it).
    /// - Returns: A size no larger than this one in either dimension. Each side of this size
    ///   and of `target` must be at least 1.
    public func fitted(to target: ImageSize, contentMode: ImageDecodingContext.ContentMode = .aspectFit) -> ImageSize {
        let source = self
        precondition(source.width > 0 && source.height > 0, "ImageSize.fitted: empty source size \(source)")
        precondition(target.width > 0 && target.height > 0, "ImageSize.fitted: empty target size \(target)")
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

extension ImageSize {
    /// The size a scalable image (a vector drawing, ``ImageHeader/isScalable``) of
    /// `width × height` pixels is drawn at for `target`: its intrinsic size rounded up without a
    /// target, else the size that fits or fills the target with the same aspect ratio — larger
    /// than the intrinsic size too, as nothing is lost drawing larger. The side that sets the
    /// scale gets the target's exactly; each side is at least 1 and at most `Int32.max`.
    public static func rendered(width: Double, height: Double, for target: ImageSize?, contentMode: ImageDecodingContext.ContentMode) -> ImageSize {
        func pixels(_ length: Double) -> Int { Int(min(max(length, 1), Double(Int32.max))) }
        guard let target, target.width > 0, target.height > 0, width > 0, height > 0 else {
            return ImageSize(width: pixels(width.rounded(.up)), height: pixels(height.rounded(.up)))
        }
        let sx = Double(target.width) / width, sy = Double(target.height) / height
        let scale = contentMode == .aspectFit ? min(sx, sy) : max(sx, sy)
        func side(_ length: Double, _ targetLength: Int, _ sideScale: Double) -> Int {
            sideScale == scale ? targetLength : pixels((length * scale).rounded())
        }
        return ImageSize(width: side(width, target.width, sx), height: side(height, target.height, sy))
    }
}
