import NukeCore
import NukePixels

extension Bitmap {
    /// The bitmap scaled to `size`, larger or smaller, in the same pixel format and alpha mode.
    ///
    /// Shrinking on both axes is NukePixels' `resized(to:)` (Pillow's thumbnail algorithm, as
    /// every decode to size); growing on either axis is a bicubic convolution (Keys' cubic,
    /// a = −0.5, Pillow's `Image.resize(size, BICUBIC)`: rows, clamped to the samples' range, then
    /// columns), premultiplied, in `Float`.
    /// An empty size traps.
    public func scaled(to size: ImageSize) -> Bitmap {
        precondition(size.width > 0 && size.height > 0, "scaling to an empty size \(size)")
        if size.width == width && size.height == height { return self }
        if size.width <= width && size.height <= height { return resized(to: size) }
        let codec = PixelRowCodec(format: pixelFormat, alphaMode: alphaMode)
        let horizontal = BicubicAxis(source: width, output: size.width)
        let vertical = BicubicAxis(source: height, output: size.height)
        let ceiling = SIMD4<Float>(repeating: codec.maximum)
        // Rows resampled horizontally, then columns.
        let rows = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: size.width * height)
        let line = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: max(width, size.width))
        defer { rows.deallocate(); line.deallocate() }
        withUnsafeBytes { source in
            for y in 0..<height {
                codec.load(source.baseAddress! + y * bytesPerRow, count: width, into: line.baseAddress!)
                for x in 0..<size.width {
                    var sum = SIMD4<Float>.zero
                    for (k, weight) in horizontal.taps(x) { sum += line[k] * weight }
                    // Clamped as Pillow clamps its 8-bit intermediate: the cubic's overshoot at a
                    // hard edge does not carry into the vertical pass.
                    rows[y * size.width + x] = sum.clamped(lowerBound: .zero, upperBound: ceiling)
                }
            }
        }
        return Bitmap(width: size.width, height: size.height, pixelFormat: pixelFormat, alphaMode: alphaMode) { out in
            let rowBytes = size.width * pixelFormat.bytesPerPixel
            for y in 0..<size.height {
                for x in 0..<size.width { line[x] = .zero }
                for (k, weight) in vertical.taps(y) {
                    let row = rows.baseAddress! + k * size.width
                    for x in 0..<size.width { line[x] += row[x] * weight }
                }
                codec.store(line.baseAddress!, count: size.width, into: out.baseAddress! + y * rowBytes)
            }
        }
    }
}
