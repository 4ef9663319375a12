import NukeCore

// The inner loops of ImageResampler. Each takes raw pointers and a channel count that callers
// pass as a literal, so that after inlining the per-pixel loops have a constant stride.

extension ImageResampler {
    /// What ``store(_:into:pixels:channels:alpha:)`` does with the last channel.
    enum AlphaHandling {
        /// No alpha, or alpha resampled like colour.
        case none
        /// Straight alpha: colour was premultiplied on the way in and is divided back.
        case unpremultiply
        /// Premultiplied alpha: colour is clamped to alpha (the cubic may overshoot).
        case clampToAlpha
    }

    /// `sum[i] (+)= source[i]` over `count` samples; the first row of a block assigns.
    @inline(__always)
    static func accumulate<Sample: FixedWidthInteger & UnsignedInteger>(
        _: Sample.Type, _ source: UnsafeRawPointer, into sum: UnsafeMutablePointer<Float>, count: Int, first: Bool
    ) {
        let size = MemoryLayout<Sample>.size
        if first {
            for i in 0..<count { sum[i] = Float(source.loadUnaligned(fromByteOffset: i &* size, as: Sample.self)) }
        } else {
            for i in 0..<count { sum[i] += Float(source.loadUnaligned(fromByteOffset: i &* size, as: Sample.self)) }
        }
    }

    /// Like ``accumulate(_:_:into:count:first:)`` with the colour channels multiplied by
    /// alpha / `max` (straight alpha in, premultiplied sums out).
    @inline(__always)
    static func accumulatePremultiplied<Sample: FixedWidthInteger & UnsignedInteger>(
        _: Sample.Type, channels: Int, _ source: UnsafeRawPointer, into sum: UnsafeMutablePointer<Float>,
        pixels: Int, max: Float, first: Bool
    ) {
        let size = MemoryLayout<Sample>.size
        let inverse = 1 / max
        let alpha = channels - 1
        var p = source
        var s = sum
        for _ in 0..<pixels {
            let a = Float(p.loadUnaligned(fromByteOffset: alpha &* size, as: Sample.self))
            let factor = a * inverse
            if first {
                for c in 0..<alpha { s[c] = Float(p.loadUnaligned(fromByteOffset: c &* size, as: Sample.self)) * factor }
                s[alpha] = a
            } else {
                for c in 0..<alpha { s[c] += Float(p.loadUnaligned(fromByteOffset: c &* size, as: Sample.self)) * factor }
                s[alpha] += a
            }
            p += channels &* size
            s += channels
        }
    }

    /// `sum[i] (+)= source[i]` in 16-bit integers (the caller keeps blocks at ≤ 257 rows).
    static func accumulate(_ source: UnsafeRawPointer, into sum: UnsafeMutablePointer<UInt16>, count: Int, first: Bool) {
        if first {
            for i in 0..<count { sum[i] = UInt16(source.load(fromByteOffset: i, as: UInt8.self)) }
        } else {
            for i in 0..<count { sum[i] &+= UInt16(source.load(fromByteOffset: i, as: UInt8.self)) }
        }
    }

    /// 8-bit straight alpha to exact integer sums: colour × alpha, and alpha × 255.
    @inline(__always)
    static func accumulatePremultiplied(
        _ source: UnsafeRawPointer, into sum: UnsafeMutablePointer<UInt32>, pixels: Int, channels c: Int, first: Bool
    ) {
        var p = source
        var s = sum
        for _ in 0..<pixels {
            let a = UInt32(p.load(fromByteOffset: c &- 1, as: UInt8.self))
            for k in 0..<(c &- 1) {
                let value = UInt32(p.load(fromByteOffset: k, as: UInt8.self)) &* a
                if first { s[k] = value } else { s[k] &+= value }
            }
            if first { s[c &- 1] = a &* 255 } else { s[c &- 1] &+= a &* 255 }
            p += c
            s += c
        }
    }

    /// ``accumulatePremultiplied(_:channels:_:into:pixels:max:first:)`` for 4 channels, a
    /// pixel per 4-lane vector.
    @inline(__always)
    static func accumulatePremultipliedRGBA<Sample: FixedWidthInteger & UnsignedInteger>(
        _: Sample.Type, _ source: UnsafeRawPointer, into sum: UnsafeMutablePointer<Float>,
        pixels: Int, max: Float, first: Bool
    ) {
        let inverse = 1 / max
        let size = MemoryLayout<Sample>.size
        var p = source
        var s = UnsafeMutableRawPointer(sum)
        for _ in 0..<pixels {
            let pixel = SIMD4<Float>(
                Float(p.loadUnaligned(as: Sample.self)), Float(p.loadUnaligned(fromByteOffset: size, as: Sample.self)),
                Float(p.loadUnaligned(fromByteOffset: 2 &* size, as: Sample.self)), Float(p.loadUnaligned(fromByteOffset: 3 &* size, as: Sample.self))
            )
            let a = pixel[3] * inverse
            var value = pixel * SIMD4(a, a, a, 1)
            if !first { value += s.loadUnaligned(as: SIMD4<Float>.self) }
            s.storeBytes(of: value, as: SIMD4<Float>.self)
            p += 4 &* size
            s += MemoryLayout<SIMD4<Float>>.size
        }
    }

    /// Averages blocks of `factor` pixels of a row of 16-bit sums over `rows` rows.
    static func boxReduce(
        _ sum: UnsafeMutablePointer<UInt16>, into row: UnsafeMutablePointer<Float>,
        pixels: Int, factor: Int, rows: Int, channels: Int
    ) {
        // 64-bit totals: a block of `factor` sums of up to 65535 each cannot overflow.
        let widen = { (value: UInt16) in UInt64(value) }
        let float = { (total: UInt64) in Float(total) }
        switch channels {
        case 1: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 1, widen: widen, float: float)
        case 2: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 2, widen: widen, float: float)
        case 3: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 3, widen: widen, float: float)
        default: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 4, widen: widen, float: float)
        }
    }

    /// Averages blocks of `factor` pixels of a row of premultiplied 32-bit sums (in units of
    /// 1/255 of a sample) over `rows` rows.
    static func boxReduce(
        _ sum: UnsafeMutablePointer<UInt32>, into row: UnsafeMutablePointer<Float>,
        pixels: Int, factor: Int, rows: Int, channels: Int
    ) {
        let widen = { (value: UInt32) in UInt64(value) }
        let float = { (total: UInt64) in Float(total) * (1 / 255) }
        if channels == 2 {
            boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 2, widen: widen, float: float)
        } else {
            boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 4, widen: widen, float: float)
        }
    }

    /// Averages blocks of `factor` pixels of a row of `Float` sums over `rows` rows.
    static func boxReduce(
        _ sum: UnsafeMutablePointer<Float>, into row: UnsafeMutablePointer<Float>,
        pixels: Int, factor: Int, rows: Int, channels: Int
    ) {
        let same = { (value: Float) in value }
        switch channels {
        case 1: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 1, widen: same, float: same)
        case 2: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 2, widen: same, float: same)
        case 3: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 3, widen: same, float: same)
        default: boxReduce(sum, into: row, pixels: pixels, factor: factor, rows: rows, channelCount: 4, widen: same, float: same)
        }
    }

    @inline(__always)
    private static func boxReduce<Sum, Total: AdditiveArithmetic>(
        _ sum: UnsafeMutablePointer<Sum>, into row: UnsafeMutablePointer<Float>,
        pixels: Int, factor: Int, rows: Int, channelCount c: Int,
        widen: (Sum) -> Total, float: (Total) -> Float
    ) {
        var start = 0
        var out = row
        let full = 1 / Float(factor * rows)
        while start < pixels {
            let end = min(start + factor, pixels)
            var t0 = Total.zero, t1 = Total.zero, t2 = Total.zero, t3 = Total.zero
            var p = sum + start &* c
            for _ in start..<end {
                t0 += widen(p[0])
                if c > 1 { t1 += widen(p[1]) }
                if c > 2 { t2 += widen(p[2]) }
                if c > 3 { t3 += widen(p[3]) }
                p += c
            }
            let norm = end - start == factor ? full : 1 / Float((end - start) * rows)
            out[0] = float(t0) * norm
            if c > 1 { out[1] = float(t1) * norm }
            if c > 2 { out[2] = float(t2) * norm }
            if c > 3 { out[3] = float(t3) * norm }
            out += c
            start = end
        }
    }

    /// `values[i] *= factor` over `count` values.
    static func scale(_ values: UnsafeMutablePointer<Float>, count: Int, by factor: Float) {
        for i in 0..<count { values[i] *= factor }
    }

    /// Horizontal convolution, one scalar accumulator per channel (1 or 2 channels).
    @inline(__always)
    static func convolve(
        _ row: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, width: Int, taps: Int,
        starts: UnsafeMutablePointer<Int>, weights: UnsafeMutablePointer<Float>, channels c: Int
    ) {
        var w = weights
        var out = target
        for x in 0..<width {
            var a0: Float = 0
            var a1: Float = 0
            var p = row + starts[x] &* c
            for k in 0..<taps {
                let weight = w[k]
                a0 += p[0] * weight
                if c > 1 { a1 += p[1] * weight }
                p += c
            }
            out[0] = a0
            if c > 1 { out[1] = a1 }
            out += c
            w += taps
        }
    }

    /// Horizontal convolution with 4-lane vectors (3 or 4 channels). For 3 channels the fourth
    /// lane reads and writes the next pixel's first sample (or the row's padding), and the next
    /// pixel's store overwrites it.
    @inline(__always)
    static func convolveSIMD(
        _ row: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, width: Int, taps: Int,
        starts: UnsafeMutablePointer<Int>, weights: UnsafeMutablePointer<Float>, channels c: Int
    ) {
        var w = weights
        var out = UnsafeMutableRawPointer(target)
        let source = UnsafeRawPointer(row)
        let stride = c &* MemoryLayout<Float>.size
        for x in 0..<width {
            var sum = SIMD4<Float>()
            var p = source + starts[x] &* stride
            for k in 0..<taps {
                sum += p.loadUnaligned(as: SIMD4<Float>.self) * w[k]
                p += stride
            }
            out.storeBytes(of: sum, as: SIMD4<Float>.self)
            out += stride
            w += taps
        }
    }

    /// `target[i] = Σₖ weightₖ · rowₖ[i]` over `count` values; `row(k)` gives the k-th row and weight.
    @inline(__always)
    static func verticalPass(
        into target: UnsafeMutablePointer<Float>, count: Int, taps: Int,
        row: (Int) -> (UnsafeMutablePointer<Float>, Float)
    ) {
        let (first, w0) = row(0)
        for i in 0..<count { target[i] = first[i] * w0 }
        var k = 1
        // Two rows per sweep: fewer passes over the target.
        while k + 1 < taps {
            let (a, wa) = row(k)
            let (b, wb) = row(k + 1)
            for i in 0..<count { target[i] += a[i] * wa + b[i] * wb }
            k += 2
        }
        if k < taps {
            let (a, wa) = row(k)
            for i in 0..<count { target[i] += a[i] * wa }
        }
    }

    /// Rounds and clamps a row of `Float` samples into 8- or 16-bit samples.
    static func store<Sample: FixedWidthInteger & UnsignedInteger>(
        _ values: UnsafeMutablePointer<Float>, into destination: UnsafeMutablePointer<Sample>,
        pixels: Int, channels: Int, alpha: AlphaHandling
    ) {
        let max = Float(Sample.max)
        @inline(__always) func quantize(_ value: Float) -> Sample {
            // NaN fails both comparisons and becomes 0. Through Int32: a concrete conversion.
            Sample(truncatingIfNeeded: Int32(value > 0 ? (value < max ? value + 0.5 : max) : 0))
        }
        let count = pixels * channels
        switch alpha {
        case .none:
            for i in 0..<count { destination[i] = quantize(values[i]) }
        case .unpremultiply, .clampToAlpha:
            let colours = channels - 1
            var v = values
            var d = destination
            for _ in 0..<pixels {
                let a = Swift.min(Swift.max(v[colours], 0), max)
                let quantizedAlpha = quantize(a)
                d[colours] = quantizedAlpha
                if alpha == .clampToAlpha {
                    for c in 0..<colours { d[c] = quantize(Swift.min(v[c], a)) }
                } else if quantizedAlpha == 0 {
                    for c in 0..<colours { d[c] = 0 }
                } else {
                    let factor = max / a
                    for c in 0..<colours { d[c] = quantize(v[c] * factor) }
                }
                v += channels
                d += channels
            }
        }
    }
}
