import NukeCore

/// Reads rows of any ``NukeCore/PixelFormat`` into `SIMD4<Float>` pixels with premultiplied
/// alpha, and writes them back: the working form of the processors that filter (blur, upscale).
///
/// Lanes are R, G, B, A (grey in lane 0); samples stay in the format's units (0…255 or 0…65535),
/// alpha in lane 3 (the maximum for formats without alpha). Straight alpha is premultiplied on
/// reading and divided out on writing; premultiplied pixels are read as they are.
struct PixelRowCodec {
    let format: PixelFormat
    let alphaMode: AlphaMode
    let maximum: Float

    init(format: PixelFormat, alphaMode: AlphaMode) {
        self.format = format
        self.alphaMode = format.hasAlpha ? alphaMode : .none
        self.maximum = format.bitsPerChannel == 8 ? 255 : 65535
    }

    /// Reads `count` pixels from `row` into `out`.
    func load(_ row: UnsafeRawPointer, count: Int, into out: UnsafeMutablePointer<SIMD4<Float>>) {
        let m = maximum
        if format.bitsPerChannel == 8 {
            let p = row.assumingMemoryBound(to: UInt8.self)
            switch format.channels {
            case .rgba:
                for i in 0..<count {
                    out[i] = SIMD4(Float(p[4 * i]), Float(p[4 * i + 1]), Float(p[4 * i + 2]), Float(p[4 * i + 3]))
                }
            case .rgb:
                for i in 0..<count { out[i] = SIMD4(Float(p[3 * i]), Float(p[3 * i + 1]), Float(p[3 * i + 2]), m) }
            case .gray:
                for i in 0..<count { out[i] = SIMD4(Float(p[i]), 0, 0, m) }
            case .grayAlpha:
                for i in 0..<count { out[i] = SIMD4(Float(p[2 * i]), 0, 0, Float(p[2 * i + 1])) }
            }
        } else {
            let channels = format.channelCount
            for i in 0..<count {
                var v = SIMD4<Float>(0, 0, 0, m)
                for c in 0..<channels {
                    let sample = Float(row.loadUnaligned(fromByteOffset: 2 * (i * channels + c), as: UInt16.self))
                    let lane = format.hasAlpha && c == channels - 1 ? 3 : c
                    v[lane] = sample
                }
                out[i] = v
            }
        }
        if alphaMode == .straight {
            let scale = 1 / m
            for i in 0..<count {
                let a = out[i].w * scale
                out[i] = SIMD4(out[i].x * a, out[i].y * a, out[i].z * a, out[i].w)
            }
        }
    }

    /// Writes `count` pixels from `values` into `row`, rounded and clamped to the format's range.
    func store(_ values: UnsafePointer<SIMD4<Float>>, count: Int, into row: UnsafeMutableRawPointer) {
        let m = maximum
        let straight = alphaMode == .straight
        let lower = SIMD4<Float>(repeating: 0), upper = SIMD4<Float>(repeating: m)
        @inline(__always) func finished(_ value: SIMD4<Float>) -> SIMD4<Float> {
            var v = value.clamped(lowerBound: lower, upperBound: upper)
            if straight {
                let a = v.w
                if a > 0 {
                    let scale = m / a
                    v = SIMD4(v.x * scale, v.y * scale, v.z * scale, a).clamped(lowerBound: lower, upperBound: upper)
                } else {
                    v = .zero
                }
            } else if format.hasAlpha {
                // Premultiplied colour never exceeds alpha.
                v = v.clamped(lowerBound: lower, upperBound: SIMD4(repeating: v.w))
            }
            return (v + 0.5).rounded(.down)
        }
        if format.bitsPerChannel == 8 {
            let p = row.assumingMemoryBound(to: UInt8.self)
            switch format.channels {
            case .rgba:
                for i in 0..<count {
                    let v = SIMD4<UInt8>(truncatingIfNeeded: SIMD4<Int32>(finished(values[i])))
                    (row + 4 * i).storeBytes(of: v, as: SIMD4<UInt8>.self)
                }
            case .rgb:
                for i in 0..<count {
                    let v = finished(values[i])
                    p[3 * i] = UInt8(v.x); p[3 * i + 1] = UInt8(v.y); p[3 * i + 2] = UInt8(v.z)
                }
            case .gray:
                for i in 0..<count { p[i] = UInt8(finished(values[i]).x) }
            case .grayAlpha:
                for i in 0..<count {
                    let v = finished(values[i])
                    p[2 * i] = UInt8(v.x); p[2 * i + 1] = UInt8(v.w)
                }
            }
        } else {
            let channels = format.channelCount
            for i in 0..<count {
                let v = finished(values[i])
                for c in 0..<channels {
                    let lane = format.hasAlpha && c == channels - 1 ? 3 : c
                    row.storeBytes(of: UInt16(v[lane]), toByteOffset: 2 * (i * channels + c), as: UInt16.self)
                }
            }
        }
    }
}
