import NukeCore

extension Bitmap {
    /// The bitmap blurred by a Gaussian of standard deviation `sigma` pixels, in the same pixel
    /// format and alpha mode.
    ///
    /// The algorithm is Pillow's `ImageFilter.GaussianBlur`: three passes of an extended box
    /// filter per axis (Gwosdek et al., "Theoretical foundations of Gaussian convolution by
    /// extended box filtering", 2011), whose variance equals σ², each O(1) per pixel whatever σ.
    /// Edges repeat the border pixels. Unlike Pillow, samples stay in `Float` between passes
    /// (Pillow rounds each pass to 8 bits) and straight alpha is blurred premultiplied, so the
    /// colour of transparent pixels does not bleed into visible ones.
    ///
    /// `sigma` ≤ 0 returns the bitmap unchanged; a non-finite one traps.
    public func blurred(sigma: Double) -> Bitmap {
        precondition(sigma.isFinite, "blur sigma must be finite")
        guard sigma > 0, width > 0, height > 0 else { return self }
        let box = ExtendedBox(sigma: sigma, passes: 3)
        let codec = PixelRowCodec(format: pixelFormat, alphaMode: alphaMode)
        let pad = box.reach
        // The image after the horizontal passes, one row of SIMD4 pixels after another. Rows go
        // through in groups of four, interleaved, so that four running sums advance together.
        let horizontal = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: width * height)
        defer { horizontal.deallocate() }
        let group = 4
        let row = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: width)
        let linesA = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: (width + 2 * pad) * group)
        let linesB = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: (width + 2 * pad) * group)
        defer { row.deallocate(); linesA.deallocate(); linesB.deallocate() }
        let base = horizontal.baseAddress!
        withUnsafeBytes { source in
            let a = linesA.baseAddress!, b = linesB.baseAddress!, r = row.baseAddress!
            for y0 in stride(from: 0, to: height, by: group) {
                let lanes = min(group, height - y0)
                for lane in 0..<lanes {
                    codec.load(source.baseAddress! + (y0 + lane) * bytesPerRow, count: width, into: r)
                    for x in 0..<width { a[(pad + x) * lanes + lane] = r[x] }
                }
                box.blur(a, b, count: width, lanes: lanes)
                box.blur(b, a, count: width, lanes: lanes)
                box.blur(a, b, count: width, lanes: lanes)
                for lane in 0..<lanes {
                    let out = base + (y0 + lane) * width
                    for x in 0..<width { out[x] = b[(pad + x) * lanes + lane] }
                }
            }
        }
        // Vertical passes on strips of columns small enough to stay in cache, each stored
        // straight into the output's rows.
        let strip = 16
        let columnA = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: (height + 2 * pad) * strip)
        let columnB = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: (height + 2 * pad) * strip)
        defer { columnA.deallocate(); columnB.deallocate() }
        let bpp = pixelFormat.bytesPerPixel
        return Bitmap(width: width, height: height, pixelFormat: pixelFormat, alphaMode: alphaMode) { out in
            let rowBytes = width * bpp
            let a = columnA.baseAddress!, b = columnB.baseAddress!
            for x0 in stride(from: 0, to: width, by: strip) {
                let lanes = min(strip, width - x0)
                for y in 0..<height {
                    (a + (y + pad) * lanes).update(from: base + y * width + x0, count: lanes)
                }
                box.blur(a, b, count: height, lanes: lanes)
                box.blur(b, a, count: height, lanes: lanes)
                box.blur(a, b, count: height, lanes: lanes)
                for y in 0..<height {
                    codec.store(b + (y + pad) * lanes, count: lanes, into: out.baseAddress! + y * rowBytes + x0 * bpp)
                }
            }
        }
    }
}
