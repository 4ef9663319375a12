extension Bitmap {
    /// Returns the bitmap in another pixel format, packed (no row padding).
    ///
    /// 8 → 16 bits multiplies by 257; 16 → 8 bits rounds (`(v × 255 + 32895) >> 16`).
    /// Colour → gray uses Rec. 601 luma weights; an added alpha channel is opaque; a removed
    /// one is dropped (premultiplied pixels are un-premultiplied first).
    public func converted(to format: PixelFormat) -> Bitmap {
        if format == pixelFormat && bytesPerRow == width * format.bytesPerPixel { return self }
        let source = alphaMode == .premultiplied && !format.hasAlpha ? unpremultiplied() : self
        let inChannels = pixelFormat.channelCount
        let outChannels = format.channelCount
        let inMax = pixelFormat.bitsPerChannel == 8 ? 255 : 65535
        let outMax = format.bitsPerChannel == 8 ? 255 : 65535
        var pixel = [Int](repeating: 0, count: 4)
        let alphaMode: AlphaMode = format.hasAlpha ? (pixelFormat.hasAlpha ? source.alphaMode : .straight) : .none
        return Bitmap(width: width, height: height, pixelFormat: format, alphaMode: alphaMode) { out in
            source.withUnsafeBytes { input in
                var o = 0
                for y in 0..<height {
                    var i = y * source.bytesPerRow
                    for _ in 0..<width {
                        // Read as r, g, b, a in the source depth.
                        for c in 0..<inChannels {
                            if pixelFormat.bitsPerChannel == 8 {
                                pixel[c] = Int(input[i + c])
                            } else {
                                pixel[c] = Int(input.loadUnaligned(fromByteOffset: i + 2 * c, as: UInt16.self))
                            }
                        }
                        i += pixelFormat.bytesPerPixel
                        var r: Int, g: Int, b: Int, a: Int
                        switch pixelFormat.channels {
                        case .gray: (r, g, b, a) = (pixel[0], pixel[0], pixel[0], inMax)
                        case .grayAlpha: (r, g, b, a) = (pixel[0], pixel[0], pixel[0], pixel[1])
                        case .rgb: (r, g, b, a) = (pixel[0], pixel[1], pixel[2], inMax)
                        case .rgba: (r, g, b, a) = (pixel[0], pixel[1], pixel[2], pixel[3])
                        }
                        if inMax != outMax {
                            if outMax == 65535 {
                                (r, g, b, a) = (r * 257, g * 257, b * 257, a * 257)
                            } else {
                                (r, g, b, a) = ((r * 255 + 32895) >> 16, (g * 255 + 32895) >> 16,
                                                (b * 255 + 32895) >> 16, (a * 255 + 32895) >> 16)
                            }
                        }
                        let values: (Int, Int, Int, Int)
                        switch format.channels {
                        case .gray, .grayAlpha:
                            let luma = pixelFormat.isGray ? r : (r * 299 + g * 587 + b * 114 + 500) / 1000
                            values = (luma, a, 0, 0)
                        case .rgb, .rgba:
                            values = (r, g, b, a)
                        }
                        let written = [values.0, values.1, values.2, values.3]
                        for c in 0..<outChannels {
                            if format.bitsPerChannel == 8 {
                                out[o] = UInt8(written[c])
                                o += 1
                            } else {
                                out.storeBytes(of: UInt16(written[c]), toByteOffset: o, as: UInt16.self)
                                o += 2
                            }
                        }
                    }
                }
            }
        }
    }

    /// Returns the bitmap with straight alpha (unchanged when it already is or has none).
    public func unpremultiplied() -> Bitmap {
        guard alphaMode == .premultiplied else { return self }
        return mapAlpha(to: .straight) { c, a, max in a == 0 ? 0 : min(max, (c * max + a / 2) / a) }
    }

    /// Returns the bitmap with premultiplied alpha (unchanged when it already is or has none).
    public func premultiplied() -> Bitmap {
        guard alphaMode == .straight else { return self }
        return mapAlpha(to: .premultiplied) { c, a, max in (c * a + max / 2) / max }
    }

    private func mapAlpha(to mode: AlphaMode, _ transform: (Int, Int, Int) -> Int) -> Bitmap {
        var copy = self
        let channels = pixelFormat.channelCount
        let wide = pixelFormat.bitsPerChannel == 16
        let max = wide ? 65535 : 255
        copy.withUnsafeMutableBytes { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let p = y * bytesPerRow + x * pixelFormat.bytesPerPixel
                    if wide {
                        let a = Int(buffer.loadUnaligned(fromByteOffset: p + 2 * (channels - 1), as: UInt16.self))
                        for c in 0..<(channels - 1) {
                            let v = Int(buffer.loadUnaligned(fromByteOffset: p + 2 * c, as: UInt16.self))
                            buffer.storeBytes(of: UInt16(transform(v, a, max)), toByteOffset: p + 2 * c, as: UInt16.self)
                        }
                    } else {
                        let a = Int(buffer[p + channels - 1])
                        for c in 0..<(channels - 1) {
                            buffer[p + c] = UInt8(transform(Int(buffer[p + c]), a, max))
                        }
                    }
                }
            }
        }
        copy.alphaMode = mode
        return copy
    }

    /// Returns the bitmap rotated and flipped so that it displays upright.
    public func oriented(_ orientation: ImageOrientation) -> Bitmap {
        if orientation == .up { return self }
        let bpp = pixelFormat.bytesPerPixel
        let outWidth = orientation.swapsDimensions ? height : width
        let outHeight = orientation.swapsDimensions ? width : height
        return Bitmap(width: outWidth, height: outHeight, pixelFormat: pixelFormat, alphaMode: alphaMode) { out in
            withUnsafeBytes { input in
                for oy in 0..<outHeight {
                    for ox in 0..<outWidth {
                        // Map the output pixel back to the stored one.
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case .up: (sx, sy) = (ox, oy)
                        case .upMirrored: (sx, sy) = (width - 1 - ox, oy)
                        case .down: (sx, sy) = (width - 1 - ox, height - 1 - oy)
                        case .downMirrored: (sx, sy) = (ox, height - 1 - oy)
                        case .leftMirrored: (sx, sy) = (oy, ox)
                        case .right: (sx, sy) = (oy, height - 1 - ox)
                        case .rightMirrored: (sx, sy) = (width - 1 - oy, height - 1 - ox)
                        case .left: (sx, sy) = (width - 1 - oy, ox)
                        }
                        let src = sy * bytesPerRow + sx * bpp
                        let dst = (oy * outWidth + ox) * bpp
                        for k in 0..<bpp { out[dst + k] = input[src + k] }
                    }
                }
            }
        }
    }
}
