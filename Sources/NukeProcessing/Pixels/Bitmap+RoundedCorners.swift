import NukeCore

extension Bitmap {
    /// The bitmap cut to a rounded rectangle of its size whose corners are quarter circles of
    /// `radius` pixels (at most half the shorter side), with an optional `border` drawn inside the
    /// edge; pixels are anti-aliased by their exact coverage.
    ///
    /// The result has alpha: gray becomes gray + alpha and RGB becomes RGBA at the same depth
    /// (straight alpha); a bitmap with alpha keeps its format and alpha mode. Its alpha is the
    /// original alpha times the coverage.
    public func roundingCorners(radius: Double, border: ImageProcessingOptions.Border? = nil) -> Bitmap {
        precondition(radius >= 0 && radius.isFinite, "a corner radius is 0 or more")
        let w = Double(width), h = Double(height)
        let outer = RoundedRectCoverage(minX: 0, minY: 0, maxX: w, maxY: h, radius: radius)
        let inset = border?.width ?? 0
        let inner = RoundedRectCoverage(minX: inset, minY: inset, maxX: w - inset, maxY: h - inset, radius: outer.radius - inset)
        let format = pixelFormat.hasAlpha ? pixelFormat
            : PixelFormat(channels: pixelFormat.isGray ? .grayAlpha : .rgba, bitsPerChannel: pixelFormat.bitsPerChannel)
        var result = converted(to: format)
        guard width > 0, height > 0 else { return result }
        let premultiplied = result.alphaMode == .premultiplied
        let wide = format.bitsPerChannel == 16
        let maximum = wide ? 65535.0 : 255.0
        let colorChannels = format.channelCount - 1
        let borderColor: [Double] = border.map { border in
            let (r, g, b) = (Double(border.color.red), Double(border.color.green), Double(border.color.blue))
            let values = format.isGray ? [(r * 299 + g * 587 + b * 114) / 1000] : [r, g, b]
            return values.map { $0 * maximum / 255 }
        } ?? []
        // Pixels farther than this from every edge are wholly inside both shapes.
        let band = Int((max(outer.radius, inset + inner.radius)).rounded(.up)) + 1
        let bpp = format.bytesPerPixel, stride = result.bytesPerRow
        result.withUnsafeMutableBytes { bytes in
            func read(_ offset: Int) -> Double {
                wide ? Double(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) : Double(bytes[offset])
            }
            func write(_ value: Double, _ offset: Int) {
                let v = min(maximum, max(0, value.rounded()))
                if wide { bytes.storeBytes(of: UInt16(v), toByteOffset: offset, as: UInt16.self) } else { bytes[offset] = UInt8(v) }
            }
            func paint(x: Int, y: Int) {
                let covered = outer.coverage(x: x, y: y)
                let inside = border == nil ? covered : inner.coverage(x: x, y: y)
                guard covered < 1 || inside < 1 else { return }
                let ring = max(0, covered - inside)
                let p = y * stride + x * bpp
                let alpha = read(p + colorChannels * (wide ? 2 : 1)) / maximum
                // Premultiplied, in 0…1 of alpha: the image inside the inner shape, the border in the ring.
                let outAlpha = alpha * inside + ring
                for c in 0..<colorChannels {
                    let offset = p + c * (wide ? 2 : 1)
                    let stored = read(offset)
                    let colour = premultiplied ? stored : stored * alpha
                    let mixed = colour * inside + (border == nil ? 0 : borderColor[c] * ring)
                    write(premultiplied ? mixed : (outAlpha > 0 ? mixed / outAlpha : 0), offset)
                }
                write(outAlpha * maximum, p + colorChannels * (wide ? 2 : 1))
            }
            for y in 0..<height {
                if y < band || y >= height - band {
                    for x in 0..<width { paint(x: x, y: y) }
                } else {
                    for x in 0..<min(band, width) { paint(x: x, y: y) }
                    for x in max(band, width - band)..<width { paint(x: x, y: y) }
                }
            }
        }
        return result
    }
}
