/// One pass of an extended box filter: the `2l + 1` samples around each one, plus the next one
/// on each side weighted by `alpha`, averaged (Gwosdek et al. 2011; Pillow's `_gaussian_blur_radius`).
struct ExtendedBox {
    /// The integer half-width `l`.
    let radius: Int
    /// The weight of the two samples just outside the box, 0…1.
    let alpha: Float
    /// `1 / (2l + 1 + 2α)`.
    let norm: Float

    /// The box whose `passes` repetitions have variance `sigma²`.
    init(sigma: Double, passes: Int) {
        let variance = sigma * sigma / Double(passes)
        let length = (12 * variance + 1).squareRoot()
        let l = ((length - 1) / 2).rounded(.down)
        let a = (2 * l + 1) * (l * (l + 1) - 3 * variance) / (6 * (variance - (l + 1) * (l + 1)))
        radius = Int(l)
        alpha = Float(a)
        norm = Float(1 / (2 * l + 1 + 2 * a))
    }

    /// Samples a pass reads beyond each end of the line.
    var reach: Int { radius + 1 }

    /// Filters `count` positions of `lanes` interleaved lines from `source` into `target`, both
    /// padded by ``reach`` positions at each end; the padding of `source` is filled here with the
    /// edge positions (edges repeat).
    func blur(_ source: UnsafeMutablePointer<SIMD4<Float>>, _ target: UnsafeMutablePointer<SIMD4<Float>>, count: Int, lanes: Int) {
        let pad = reach
        for k in 0..<pad {
            for lane in 0..<lanes {
                source[k * lanes + lane] = source[pad * lanes + lane]
                source[(pad + count + k) * lanes + lane] = source[(pad + count - 1) * lanes + lane]
            }
        }
        let alpha = SIMD4<Float>(repeating: self.alpha), norm = SIMD4<Float>(repeating: self.norm)
        let l = radius
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: lanes) { sums in
            // The sums of the 2l + 1 positions centred on position 0; the lanes' running sums are
            // independent, so they advance together.
            for lane in 0..<lanes {
                var sum = SIMD4<Float>.zero
                for k in -l...l { sum += source[(pad + k) * lanes + lane] }
                sums[lane] = sum
            }
            var p = source + pad * lanes
            var out = target + pad * lanes
            let ahead = (l + 1) * lanes, behind = -l * lanes, outside = -(l + 1) * lanes
            for _ in 0..<count {
                for lane in 0..<lanes {
                    let next = p[ahead + lane]
                    out[lane] = (sums[lane] + alpha * (p[outside + lane] + next)) * norm
                    sums[lane] += next - p[behind + lane]
                }
                p += lanes
                out += lanes
            }
        }
    }
}
