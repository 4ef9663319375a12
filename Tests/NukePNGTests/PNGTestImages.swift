import NukeCore

/// Synthetic images for the tests.
enum PNGTestImages {
    /// A deterministic pattern exercising every sample value range of `format`.
    static func gradient(width: Int, height: Int, format: PixelFormat, seed: UInt32 = 1) -> Bitmap {
        var state = seed
        return Bitmap(width: width, height: height, pixelFormat: format) { buffer in
            var offset = 0
            for y in 0..<height {
                for x in 0..<width {
                    for c in 0..<format.channelCount {
                        state = state &* 1_664_525 &+ 1_013_904_223
                        let noise = Int(state >> 27)
                        let isAlpha = format.hasAlpha && c == format.channelCount - 1
                        let value8 = isAlpha ? (x * 7 + y * 3) % 256 : (x * 255 / max(width - 1, 1) + c * 40 + y + noise) % 256
                        if format.bitsPerChannel == 8 {
                            buffer[offset] = UInt8(value8)
                            offset += 1
                        } else {
                            let value16 = UInt16(value8 * 257 ^ Int(state >> 24))
                            buffer.storeBytes(of: value16, toByteOffset: offset, as: UInt16.self)
                            offset += 2
                        }
                    }
                }
            }
        }
    }
}
