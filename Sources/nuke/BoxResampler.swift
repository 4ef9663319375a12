import NukeCore

/// Resizes bitmaps by area averaging (a box filter): each output pixel is the mean of the
/// source area it covers, partial pixels weighted by their overlap.
///
/// Exact for downscaling by any factor, integer or not. Colour is averaged premultiplied by
/// alpha, so transparent pixels do not darken edges, and the result has the source's pixel
/// format and alpha mode.
enum BoxResampler {
    /// Returns `bitmap` resized to `width` × `height`.
    static func resize(_ bitmap: Bitmap, width: Int, height: Int) -> Bitmap {
        precondition(width > 0 && height > 0, "target size must be positive")
        if bitmap.width == width && bitmap.height == height { return bitmap }
        let format = bitmap.pixelFormat
        let channels = format.channelCount
        let alpha = format.hasAlpha ? channels - 1 : nil
        let straight = bitmap.alphaMode == .straight
        let maxValue = Float(format.bitsPerChannel == 8 ? 255 : 65535)

        // Source samples as floats, colour premultiplied.
        var source = [Float](repeating: 0, count: bitmap.width * bitmap.height * channels)
        bitmap.withUnsafeBytes { raw in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let o = (y * bitmap.width + x) * channels
                    let i = y * bitmap.bytesPerRow + x * format.bytesPerPixel
                    for c in 0..<channels {
                        source[o + c] = format.bitsPerChannel == 8
                            ? Float(raw[i + c])
                            : Float(raw.loadUnaligned(fromByteOffset: i + 2 * c, as: UInt16.self))
                    }
                    if let alpha, straight {
                        let a = source[o + alpha] / maxValue
                        for c in 0..<alpha { source[o + c] *= a }
                    }
                }
            }
        }

        let horizontal = weights(from: bitmap.width, to: width)
        let vertical = weights(from: bitmap.height, to: height)
        // Horizontal pass: bitmap.height rows of `width` pixels.
        var rows = [Float](repeating: 0, count: width * bitmap.height * channels)
        for y in 0..<bitmap.height {
            for (x, taps) in horizontal.enumerated() {
                let o = (y * width + x) * channels
                for tap in taps {
                    let i = (y * bitmap.width + tap.index) * channels
                    for c in 0..<channels { rows[o + c] += source[i + c] * tap.weight }
                }
            }
        }
        // Vertical pass.
        var output = [Float](repeating: 0, count: width * height * channels)
        for (y, taps) in vertical.enumerated() {
            for tap in taps {
                let rowStart = tap.index * width * channels
                let outStart = y * width * channels
                for k in 0..<(width * channels) { output[outStart + k] += rows[rowStart + k] * tap.weight }
            }
        }

        return Bitmap(width: width, height: height, pixelFormat: format, alphaMode: bitmap.alphaMode) { out in
            for p in 0..<(width * height) {
                let o = p * channels
                if let alpha, straight {
                    let a = output[o + alpha] / maxValue
                    for c in 0..<alpha { output[o + c] = a > 0 ? output[o + c] / a : 0 }
                }
                for c in 0..<channels {
                    let value = min(max(output[o + c].rounded(), 0), maxValue)
                    if format.bitsPerChannel == 8 {
                        out[o + c] = UInt8(value)
                    } else {
                        out.storeBytes(of: UInt16(value), toByteOffset: (o + c) * 2, as: UInt16.self)
                    }
                }
            }
        }
    }

    /// The size that fits inside `bounds` with the aspect ratio of `size`, never larger than `size`.
    static func fittingSize(_ size: ImageSize, in bounds: ImageSize) -> ImageSize {
        guard size.width > bounds.width || size.height > bounds.height else { return size }
        let scale = min(Double(bounds.width) / Double(size.width), Double(bounds.height) / Double(size.height))
        return ImageSize(
            width: min(bounds.width, max(1, Int((Double(size.width) * scale).rounded()))),
            height: min(bounds.height, max(1, Int((Double(size.height) * scale).rounded())))
        )
    }

    struct Tap {
        var index: Int
        var weight: Float
    }

    /// For each output sample, the source samples it covers and their normalised weights.
    static func weights(from source: Int, to target: Int) -> [[Tap]] {
        let scale = Double(source) / Double(target)
        return (0..<target).map { o in
            let start = Double(o) * scale
            let end = Double(o + 1) * scale
            var taps: [Tap] = []
            var i = Int(start.rounded(.down))
            while Double(i) < end, i < source {
                let overlap = min(end, Double(i + 1)) - max(start, Double(i))
                if overlap > 1e-9 { taps.append(Tap(index: i, weight: Float(overlap / (end - start)))) }
                i += 1
            }
            return taps
        }
    }
}
