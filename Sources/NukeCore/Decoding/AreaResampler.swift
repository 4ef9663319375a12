/// The core's own resampler, for a program that links no NukePixels (an app with NukeCore and
/// decoders of its own): each output pixel is the average of the source area it covers, with
/// straight alpha weighted by coverage, so that a decoder that ignores the target size still
/// returns an image of the planned size on every path. NukePixels announces a better one
/// (box reduction, then bicubic), which replaces it (``ImageResizing``).
enum AreaResampler {
    /// For each output index along an axis: the first source index it covers and the weights of
    /// that and the following ones (summing to 1).
    struct Axis {
        var starts: [Int] = []
        var weights: [[Float]] = []

        init(source: Int, extent: Double, target: Int) {
            let scale = min(extent, Double(source)) / Double(target)
            for index in 0..<target {
                let low = Double(index) * scale
                let high = min(Double(index + 1) * scale, Double(source))
                let first = min(source - 1, Int(low.rounded(.down)))
                let last = max(first, min(source - 1, Int(high.rounded(.up)) - 1))
                var row: [Float] = []
                for position in first...last {
                    row.append(Float(max(0, min(high, Double(position + 1)) - max(low, Double(position)))))
                }
                let total = row.reduce(0, +)
                starts.append(first)
                weights.append(total > 0 ? row.map { $0 / total } : [1])
            }
        }
    }

    /// `bitmap` resampled to `size` (smaller or equal on both sides); `sourceExtent`: how much of
    /// it the image covers when a codec's reduction rounded its size up.
    static func resize(_ bitmap: Bitmap, to size: ImageSize, sourceExtent: (width: Double, height: Double)?) -> Bitmap {
        let format = bitmap.pixelFormat
        let channels = format.channelCount
        let wide = format.bitsPerChannel == 16
        let maximum: Float = wide ? 65535 : 255
        let alpha = format.hasAlpha && bitmap.alphaMode == .straight ? channels - 1 : nil
        let horizontal = Axis(source: bitmap.width, extent: sourceExtent?.width ?? Double(bitmap.width), target: size.width)
        let vertical = Axis(source: bitmap.height, extent: sourceExtent?.height ?? Double(bitmap.height), target: size.height)

        // Horizontal pass: every source row to the output width, colour weighted by alpha.
        var rows = [SIMD4<Float>](repeating: .zero, count: bitmap.height * size.width)
        bitmap.withUnsafeBytes { raw in
            for y in 0..<bitmap.height {
                let row = raw.baseAddress! + y * bitmap.bytesPerRow
                for x in 0..<size.width {
                    var sum = SIMD4<Float>.zero
                    for (offset, weight) in horizontal.weights[x].enumerated() {
                        let pixel = horizontal.starts[x] + offset
                        var sample = SIMD4<Float>.zero
                        for channel in 0..<channels {
                            let index = pixel * channels + channel
                            sample[channel] = wide ? Float(row.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self))
                                : Float(row.load(fromByteOffset: index, as: UInt8.self))
                        }
                        if let alpha {
                            for channel in 0..<alpha { sample[channel] *= sample[alpha] / maximum }
                        }
                        sum += sample * weight
                    }
                    rows[y * size.width + x] = sum
                }
            }
        }
        // Vertical pass, then back to straight alpha and the stored depth.
        return Bitmap(width: size.width, height: size.height, pixelFormat: format, alphaMode: bitmap.alphaMode) { output in
            let stride = size.width * format.bytesPerPixel
            for y in 0..<size.height {
                for x in 0..<size.width {
                    var sum = SIMD4<Float>.zero
                    for (offset, weight) in vertical.weights[y].enumerated() {
                        sum += rows[(vertical.starts[y] + offset) * size.width + x] * weight
                    }
                    if let alpha, sum[alpha] > 0 {
                        for channel in 0..<alpha { sum[channel] *= maximum / sum[alpha] }
                    }
                    for channel in 0..<channels {
                        let value = min(maximum, max(0, sum[channel].rounded()))
                        let index = (x * channels + channel) * (wide ? 2 : 1)
                        if wide {
                            output.storeBytes(of: UInt16(value), toByteOffset: y * stride + index, as: UInt16.self)
                        } else {
                            output.storeBytes(of: UInt8(value), toByteOffset: y * stride + index, as: UInt8.self)
                        }
                    }
                }
            }
        }
    }
}
