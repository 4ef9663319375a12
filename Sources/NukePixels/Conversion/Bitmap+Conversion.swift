import NukeCore

extension Bitmap {
    /// Returns the bitmap in another pixel format, packed (no row padding).
    ///
    /// 8 → 16 bits multiplies by 257; 16 → 8 bits rounds (`(v × 255 + 32895) >> 16`).
    /// Colour → gray uses Rec. 601 luma weights; an added alpha channel is opaque; a removed
    /// one is dropped (premultiplied pixels are un-premultiplied first).
    public func converted(to format: PixelFormat) -> Bitmap {
        if format == pixelFormat && bytesPerRow == width * format.bytesPerPixel { return self }
        let source = alphaMode == .premultiplied && !format.hasAlpha ? unpremultiplied() : self
        let input = pixelFormat
        let inMax = input.bitsPerChannel == 8 ? 255 : 65535
        let outMax = format.bitsPerChannel == 8 ? 255 : 65535
        let alphaMode: AlphaMode = format.hasAlpha ? (input.hasAlpha ? source.alphaMode : .straight) : .none
        return Bitmap(width: width, height: height, pixelFormat: format, alphaMode: alphaMode) { out in
            source.withUnsafeBytes { bytes in
                func read(_ offset: Int) -> Int {
                    input.bitsPerChannel == 8 ? Int(bytes[offset]) : Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
                }
                func rescale(_ value: Int) -> Int {
                    if inMax == outMax { return value }
                    return outMax == 65535 ? value * 257 : (value * 255 + 32895) >> 16
                }
                var o = 0
                func write(_ value: Int) {
                    if format.bitsPerChannel == 8 {
                        out[o] = UInt8(truncatingIfNeeded: value)
                        o += 1
                    } else {
                        out.storeBytes(of: UInt16(truncatingIfNeeded: value), toByteOffset: o, as: UInt16.self)
                        o += 2
                    }
                }
                let step = input.bytesPerChannel
                for y in 0..<height {
                    var i = y * source.bytesPerRow
                    for _ in 0..<width {
                        // Read as r, g, b, a in the source depth.
                        let r: Int, g: Int, b: Int, a: Int
                        switch input.channels {
                        case .gray: (r, g, b, a) = (read(i), read(i), read(i), inMax)
                        case .grayAlpha: (r, g, b, a) = (read(i), read(i), read(i), read(i + step))
                        case .rgb: (r, g, b, a) = (read(i), read(i + step), read(i + 2 * step), inMax)
                        case .rgba: (r, g, b, a) = (read(i), read(i + step), read(i + 2 * step), read(i + 3 * step))
                        }
                        i += input.bytesPerPixel
                        switch format.channels {
                        case .gray, .grayAlpha:
                            let luma = input.isGray ? r : (r * 299 + g * 587 + b * 114 + 500) / 1000
                            write(rescale(luma))
                            if format.channels == .grayAlpha { write(rescale(a)) }
                        case .rgb, .rgba:
                            write(rescale(r))
                            write(rescale(g))
                            write(rescale(b))
                            if format.channels == .rgba { write(rescale(a)) }
                        }
                    }
                }
            }
        }
    }
}
