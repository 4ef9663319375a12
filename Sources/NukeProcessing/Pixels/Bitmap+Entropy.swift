#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NukeCore
import NukePixels

extension Bitmap {
    /// The `width × height` rectangle with the most detail, found as libvips'
    /// `interesting=entropy` does: while the rectangle is larger than asked, compare the slice that
    /// would be trimmed from each end of the longer excess and trim the one whose luma histogram
    /// has less entropy. Slices are at most 1/8 of the excess (at least one pixel) wide.
    func mostDetailedRect(width targetWidth: Int, height targetHeight: Int) -> ImageRect {
        let luma = converted(to: .gray8)
        var rect = ImageRect(x: 0, y: 0, width: width, height: height)
        luma.withUnsafeBytes { pixels in
            func entropy(_ r: ImageRect) -> Double {
                var histogram = [Int](repeating: 0, count: 256)
                for y in r.y..<(r.y + r.height) {
                    for x in r.x..<(r.x + r.width) { histogram[Int(pixels[y * luma.bytesPerRow + x])] += 1 }
                }
                let total = Double(r.width * r.height)
                return histogram.reduce(0.0) { sum, count in
                    count == 0 ? sum : sum - Double(count) / total * log2(Double(count) / total)
                }
            }
            while rect.width > targetWidth || rect.height > targetHeight {
                if rect.width - targetWidth >= rect.height - targetHeight {
                    let slice = max(1, (rect.width - targetWidth) / 8)
                    let left = ImageRect(x: rect.x, y: rect.y, width: slice, height: rect.height)
                    let right = ImageRect(x: rect.x + rect.width - slice, y: rect.y, width: slice, height: rect.height)
                    if entropy(left) < entropy(right) { rect.x += slice }
                    rect.width -= slice
                } else {
                    let slice = max(1, (rect.height - targetHeight) / 8)
                    let top = ImageRect(x: rect.x, y: rect.y, width: rect.width, height: slice)
                    let bottom = ImageRect(x: rect.x, y: rect.y + rect.height - slice, width: rect.width, height: slice)
                    if entropy(top) < entropy(bottom) { rect.y += slice }
                    rect.height -= slice
                }
            }
        }
        return rect
    }
}
