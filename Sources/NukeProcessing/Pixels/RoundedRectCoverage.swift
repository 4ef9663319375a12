#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How much of each pixel a rounded rectangle covers, computed exactly (the area of the pixel's
/// square inside the shape, from the integral of the circle), so edges are anti-aliased by
/// coverage rather than by a fixed number of samples.
///
/// The rectangle spans `minX…maxX × minY…maxY` in pixel coordinates (pixel `(x, y)` is the square
/// `x…x+1 × y…y+1`) and its corners are quarter circles of `radius` (at most half the shorter side).
struct RoundedRectCoverage {
    let minX: Double, minY: Double, maxX: Double, maxY: Double
    let radius: Double

    /// Each corner: the circle's centre and the square that holds its quarter disc.
    private let corners: [(cx: Double, cy: Double, x0: Double, x1: Double, y0: Double, y1: Double)]

    init(minX: Double, minY: Double, maxX: Double, maxY: Double, radius: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
        let r = max(0, min(radius, (maxX - minX) / 2, (maxY - minY) / 2))
        self.radius = r
        corners = [
            (minX + r, minY + r, minX, minX + r, minY, minY + r),
            (maxX - r, minY + r, maxX - r, maxX, minY, minY + r),
            (minX + r, maxY - r, minX, minX + r, maxY - r, maxY),
            (maxX - r, maxY - r, maxX - r, maxX, maxY - r, maxY),
        ]
    }

    /// `true` when the shape has no area.
    var isEmpty: Bool { maxX <= minX || maxY <= minY }

    /// The fraction of pixel `(x, y)` inside the shape, 0…1.
    func coverage(x: Int, y: Int) -> Double {
        guard !isEmpty else { return 0 }
        let x0 = Double(x), x1 = x0 + 1, y0 = Double(y), y1 = y0 + 1
        var area = Self.overlap(x0, x1, minX, maxX) * Self.overlap(y0, y1, minY, maxY)
        guard radius > 0, area > 0 else { return area }
        let r = radius
        // Each corner square holds a quarter disc: take away what of the pixel lies in the square
        // but outside the disc.
        for corner in corners {
            let ax0 = max(x0, corner.x0), ax1 = min(x1, corner.x1), ay0 = max(y0, corner.y0), ay1 = min(y1, corner.y1)
            guard ax0 < ax1, ay0 < ay1 else { continue }
            let (u0, u1, v0, v1) = (ax0 - corner.cx, ax1 - corner.cx, ay0 - corner.cy, ay1 - corner.cy)
            // Wholly inside the disc (its farthest point is) or wholly outside (its nearest is).
            let far = max(u0 * u0, u1 * u1) + max(v0 * v0, v1 * v1)
            if far <= r * r { continue }
            let nu = u0 > 0 ? u0 : (u1 < 0 ? u1 : 0), nv = v0 > 0 ? v0 : (v1 < 0 ? v1 : 0)
            let inSquare = (ax1 - ax0) * (ay1 - ay0)
            let inDisc = nu * nu + nv * nv >= r * r ? 0 : Self.discArea(x0: u0, x1: u1, y0: v0, y1: v1, radius: r)
            area -= inSquare - inDisc
        }
        return min(1, max(0, area))
    }

    private static func overlap(_ a0: Double, _ a1: Double, _ b0: Double, _ b1: Double) -> Double {
        max(0, min(a1, b1) - max(a0, b0))
    }

    /// The area of the rectangle `x0…x1 × y0…y1` inside the disc of `radius` centred on the origin.
    ///
    /// Between the abscissae where the circle crosses `y0` or `y1`, the covered height is
    /// `min(y1, h) − max(y0, −h)` with `h = √(r² − x²)`, each term a constant or `±h`, whose
    /// integral is `G(x) = (x·h + r²·asin(x / r)) / 2`.
    static func discArea(x0: Double, x1: Double, y0: Double, y1: Double, radius r: Double) -> Double {
        let a = max(x0, -r), b = min(x1, r)
        guard a < b, y0 < y1 else { return 0 }
        var breaks = [a, b]
        for edge in [y0, y1] where abs(edge) < r {
            let crossing = (r * r - edge * edge).squareRoot()
            for x in [-crossing, crossing] where x > a && x < b { breaks.append(x) }
        }
        breaks.sort()
        func h(_ x: Double) -> Double { max(0, r * r - x * x).squareRoot() }
        func g(_ x: Double) -> Double { (x * h(x) + r * r * asin(min(1, max(-1, x / r)))) / 2 }
        var area = 0.0
        for (p, q) in zip(breaks, breaks.dropFirst()) where q > p {
            let m = (p + q) / 2, hm = h(m)
            guard min(y1, hm) > max(y0, -hm) else { continue }
            let width = q - p, arc = g(q) - g(p)
            let upper = y1 <= hm ? y1 * width : arc
            let lower = y0 >= -hm ? y0 * width : -arc
            area += upper - lower
        }
        return area
    }
}
