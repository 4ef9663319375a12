import NukeCore

/// How one axis of an ``ImageResampler`` goes from the source size to the output size: an
/// integer box reduction by ``factor``, then a bicubic convolution with fixed-length windows.
///
/// The geometry follows Pillow's `Image.resize(size, BICUBIC, reducing_gap=2.0)`, which
/// `Image.thumbnail` uses: the factor is `⌊source / output / 2⌋` (at least 1), the reduced axis
/// has `⌈source / factor⌉` samples (the last block may be partial and is averaged over the
/// samples it has), and the convolution maps the box `0 ..< extent / factor` of the reduced axis
/// onto the output, with Keys' cubic (a = −0.5, support 2) stretched by the scale when shrinking.
/// The extent is the source's size, or less when its last sample covers only part of a pixel of
/// the image it was reduced from (a JPEG decoded at 2/8 is ⌈3837 × 2/8⌉ = 960 rows for 959.25
/// rows of the image: Pillow's `thumbnail` resizes from `draft()`'s box `0 ..< 959.25`).
struct ResamplingAxis {
    /// Source samples along the axis.
    let sourceSize: Int
    /// Output samples along the axis.
    let outputSize: Int
    /// Box-reduction factor (1 when there is none).
    let factor: Int
    /// Samples after the box reduction: `⌈sourceSize / factor⌉`.
    let reducedSize: Int
    /// `true` when source and output have the same size: no reduction, no convolution.
    let isIdentity: Bool
    /// Taps per output sample; every window has this length (weights outside the filter's
    /// support are zero), so inner loops have a constant trip count.
    let taps: Int
    /// For each output sample, the first reduced sample of its window.
    let starts: [Int]
    /// `outputSize × taps` normalised weights, output sample by output sample.
    let weights: [Float]

    /// The reduction gap of Pillow's `thumbnail`: the convolution always shrinks by at least this.
    static let reducingGap = 2.0

    /// - Parameter extent: How much of the image the source's samples cover, in samples:
    ///   `source` (the default), or down to `source − 1` when the last one covers part of one.
    init(source: Int, output: Int, extent: Double? = nil) {
        precondition(source > 0 && output > 0 && output <= source, "resampling \(source) to \(output) samples")
        let extent = min(Double(source), max(Double(source - 1), extent ?? Double(source), Double(output)))
        sourceSize = source
        outputSize = output
        isIdentity = source == output
        factor = max(1, Int(extent / Double(output) / Self.reducingGap))
        reducedSize = (source + factor - 1) / factor
        if isIdentity {
            taps = 1
            starts = Array(0..<output)
            weights = [Float](repeating: 1, count: output)
            return
        }
        // Pillow's precompute_coeffs, for the box 0 ..< extent / factor of the reduced axis.
        let inSize = reducedSize
        let scale = extent / Double(factor) / Double(output)
        let filterScale = max(scale, 1)
        let support = Self.support * filterScale
        var windows: [(start: Int, weights: [Double])] = []
        windows.reserveCapacity(output)
        for x in 0..<output {
            let center = (Double(x) + 0.5) * scale
            let lower = max(0, Int(center - support + 0.5))
            let upper = min(inSize, Int(center + support + 0.5))
            var w = (lower..<max(lower, upper)).map { Self.bicubic((Double($0) - center + 0.5) / filterScale) }
            let sum = w.reduce(0, +)
            if sum != 0 { w = w.map { $0 / sum } }
            windows.append((lower, w))
        }
        let taps = max(1, min(inSize, windows.map(\.weights.count).max() ?? 1))
        var starts = [Int]()
        var weights = [Float](repeating: 0, count: output * taps)
        starts.reserveCapacity(output)
        for (x, window) in windows.enumerated() {
            // Shift the window left where it would pass the end; the extra taps weigh 0.
            let start = min(window.start, inSize - taps)
            for (k, w) in window.weights.enumerated() {
                weights[x * taps + window.start - start + k] = Float(w)
            }
            starts.append(start)
        }
        self.taps = taps
        self.starts = starts
        self.weights = weights
    }

    /// Support of the cubic filter, in output samples.
    static let support = 2.0

    /// Keys' cubic convolution kernel with a = −0.5 (Pillow's `BICUBIC`, Catmull–Rom).
    static func bicubic(_ value: Double) -> Double {
        let a = -0.5
        let x = abs(value)
        if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
        if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
        return 0
    }
}
