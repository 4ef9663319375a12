extension Bitmap {
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
}
