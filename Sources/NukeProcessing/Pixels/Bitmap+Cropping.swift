import NukeCore

extension Bitmap {
    /// A copy of the pixels in `rect`, in the same pixel format and alpha mode, packed.
    ///
    /// A rectangle that is empty or not inside the bitmap traps: check it with
    /// ``ImageRect/isInside(_:)``.
    public func cropped(to rect: ImageRect) -> Bitmap {
        precondition(rect.isInside(ImageSize(width: width, height: height)), "crop \(rect) is not inside the \(width)×\(height) bitmap")
        if rect.x == 0, rect.y == 0, rect.width == width, rect.height == height { return self }
        let bpp = pixelFormat.bytesPerPixel
        let rowBytes = rect.width * bpp
        return Bitmap(width: rect.width, height: rect.height, pixelFormat: pixelFormat, alphaMode: alphaMode) { out in
            withUnsafeBytes { source in
                guard let from = source.baseAddress, let to = out.baseAddress else { return }
                for y in 0..<rect.height {
                    (to + y * rowBytes).copyMemory(from: from + (rect.y + y) * bytesPerRow + rect.x * bpp, byteCount: rowBytes)
                }
            }
        }
    }
}
