import Foundation
import NukeCore
import NukeNetpbm
import NukePixels

/// How a decoded bitmap differs from a reference: size, pixel format, the largest sample
/// difference, PSNR, and the first pixel outside the tolerance.
///
/// ```swift
/// let comparison = ImageComparison(decoded.image.bitmap, reference: try Netpbm.decode(pam), tolerance: .maxDifference(2))
/// #expect(comparison.isMatch, "\(comparison)")
/// ```
///
/// The decoded bitmap is converted to the reference's pixel format only when that loses
/// nothing — more channels (gray → RGB, an opaque alpha added) or more bits (8 → 16). Any
/// other difference in layout is a mismatch: a decoder that outputs RGBA for an RGB file, or
/// 8 bits for a 16-bit reference, has a defect the comparison must not hide. Premultiplied
/// pixels are un-premultiplied first (references have straight alpha).
public struct ImageComparison: Sendable, CustomStringConvertible {
    /// One sample that differs from the reference by more than the tolerance.
    public struct Difference: Sendable, Hashable {
        public var x: Int
        public var y: Int
        public var channel: Int
        /// The decoded pixel's samples, in the reference's format.
        public var actual: [Int]
        /// The reference pixel's samples.
        public var expected: [Int]
    }

    /// The decoded bitmap's size and format.
    public let actualDescription: String
    /// The reference's size and format.
    public let expectedDescription: String
    /// Why the bitmaps cannot be compared sample by sample (size or layout), or `nil`.
    public let layoutMismatch: String?
    /// The largest absolute difference between two samples, in the reference's units.
    public let maxDifference: Int
    /// How many samples differ by more than the tolerance.
    public let differingSampleCount: Int
    /// Peak signal-to-noise ratio in dB; `.infinity` for identical pixels.
    public let psnr: Double
    /// The first sample (in row order) outside the tolerance.
    public let firstDifference: Difference?
    /// The tolerance the comparison used.
    public let tolerance: Tolerance

    /// `true` when the layouts agree and the pixels are within ``tolerance``.
    public var isMatch: Bool {
        guard layoutMismatch == nil, differingSampleCount == 0 else { return false }
        if let minimum = tolerance.minimumPSNR, psnr < minimum { return false }
        return true
    }

    /// Compares a decoded bitmap with a reference.
    ///
    /// - Parameters:
    ///   - actual: The decoder's output.
    ///   - reference: The expected pixels (a reference decode read with `Netpbm.decode`).
    ///   - tolerance: The allowed difference.
    public init(_ actual: Bitmap, reference: Bitmap, tolerance: Tolerance = .exact) {
        self.tolerance = tolerance
        actualDescription = "\(actual.width)×\(actual.height) \(actual.pixelFormat)\(actual.alphaMode == .premultiplied ? " premultiplied" : "")"
        expectedDescription = "\(reference.width)×\(reference.height) \(reference.pixelFormat)"
        let mismatch: String?
        if actual.width != reference.width || actual.height != reference.height {
            mismatch = "size \(actual.width)×\(actual.height) differs from the reference's \(reference.width)×\(reference.height)"
        } else if !ImageComparison.isLosslessWidening(from: actual.pixelFormat, to: reference.pixelFormat) {
            mismatch = "pixel format \(actual.pixelFormat) cannot be compared with the reference's \(reference.pixelFormat) without losing information"
        } else {
            mismatch = nil
        }
        layoutMismatch = mismatch
        guard mismatch == nil else {
            maxDifference = Int.max
            differingSampleCount = 0
            psnr = 0
            firstDifference = nil
            return
        }
        let converted = actual.unpremultiplied().converted(to: reference.pixelFormat)
        let reference = reference.converted(to: reference.pixelFormat)  // packed
        let format = reference.pixelFormat
        let channels = format.channelCount
        let wide = format.bitsPerChannel == 16
        let sampleCount = reference.width * reference.height * channels
        var maxDiff = 0
        var differing = 0
        var sumOfSquares = 0.0
        var first: (index: Int, channel: Int)?
        converted.withUnsafeBytes { a in
            reference.withUnsafeBytes { e in
                for index in 0..<sampleCount {
                    let x: Int, y: Int
                    if wide {
                        x = Int(a.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
                        y = Int(e.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
                    } else {
                        x = Int(a[index])
                        y = Int(e[index])
                    }
                    let d = abs(x - y)
                    if d == 0 { continue }
                    sumOfSquares += Double(d * d)
                    if d > maxDiff { maxDiff = d }
                    if d > tolerance.maxDifference {
                        differing += 1
                        if first == nil { first = (index, index % channels) }
                    }
                }
            }
        }
        maxDifference = maxDiff
        differingSampleCount = differing
        if sumOfSquares == 0 || sampleCount == 0 {
            psnr = .infinity
        } else {
            let peak = Double(wide ? 65535 : 255)
            psnr = 10 * log10(peak * peak / (sumOfSquares / Double(sampleCount)))
        }
        if let first {
            let pixel = first.index / channels
            let x = pixel % reference.width, y = pixel / reference.width
            func samples(_ bitmap: Bitmap) -> [Int] { (0..<channels).map { bitmap.sample(x: x, y: y, channel: $0) } }
            firstDifference = Difference(x: x, y: y, channel: first.channel, actual: samples(converted), expected: samples(reference))
        } else {
            firstDifference = nil
        }
    }

    /// `true` when converting `source` to `target` keeps every value: the same or more
    /// channels of the same kind, and the same or more bits.
    public static func isLosslessWidening(from source: PixelFormat, to target: PixelFormat) -> Bool {
        guard source.bitsPerChannel <= target.bitsPerChannel else { return false }
        switch (source.channels, target.channels) {
        case (.gray, _): return true
        case (.grayAlpha, .grayAlpha), (.grayAlpha, .rgba): return true
        case (.rgb, .rgb), (.rgb, .rgba): return true
        case (.rgba, .rgba): return true
        default: return false
        }
    }

    public var description: String {
        if let layoutMismatch {
            return "decoded \(actualDescription), reference \(expectedDescription): \(layoutMismatch)"
        }
        let psnrText = psnr.isInfinite ? "identical" : String(format: "PSNR %.2f dB", psnr)
        var text = "\(actualDescription): max difference \(maxDifference) (tolerance \(tolerance.maxDifference)), \(psnrText)"
        if let minimum = tolerance.minimumPSNR { text += String(format: " (minimum %.2f dB)", minimum) }
        if let d = firstDifference {
            text += "; \(differingSampleCount) samples outside the tolerance, the first at (\(d.x), \(d.y)) channel \(d.channel): decoded \(d.actual), reference \(d.expected)"
        }
        return text
    }
}
