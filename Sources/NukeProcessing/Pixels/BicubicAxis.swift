/// The weights of Pillow's bicubic resampling along one axis: for each output position, the
/// source positions and their normalised weights.
struct BicubicAxis {
    private let starts: [Int]
    private let weights: [[Float]]

    init(source: Int, output: Int) {
        let scale = Double(source) / Double(output)
        let filterScale = max(scale, 1)
        let support = 2 * filterScale
        var starts: [Int] = [], weights: [[Float]] = []
        for i in 0..<output {
            let center = (Double(i) + 0.5) * scale
            let first = max(0, Int((center - support + 0.5).rounded(.down)))
            let end = min(source, Int((center + support + 0.5).rounded(.down)))
            var w = (first..<end).map { Self.cubic((Double($0) - center + 0.5) / filterScale) }
            let total = w.reduce(0, +)
            if total != 0 { w = w.map { $0 / total } }
            starts.append(first)
            weights.append(w.map(Float.init))
        }
        self.starts = starts
        self.weights = weights
    }

    /// The source positions and weights of output position `i`.
    func taps(_ i: Int) -> some Sequence<(Int, SIMD4<Float>)> {
        weights[i].enumerated().lazy.map { (self.starts[i] + $0.offset, SIMD4<Float>(repeating: $0.element)) }
    }

    /// Keys' cubic convolution kernel with a = −0.5.
    static func cubic(_ x: Double) -> Double {
        let a = -0.5, x = abs(x)
        if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
        if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
        return 0
    }
}
