import NukeCore

extension Bitmap {
    /// A copy of the pixels in `rect`, in the same pixel format and alpha mode, packed.
    ///
    /// A rectangle that is empty or not inside the bitmap traps: check it with
    /// `ImageRect.isInside(_:)`.
    public func cropped(to rect: ImageRect) -> Bitmap {
        precondition(rect.isInside(ImageSize(width: width, height: height)), "crop \(rect) is not inside the \(width)×\(height) bitmap")
        return oriented(.up, cropping: rect)
    }
}
