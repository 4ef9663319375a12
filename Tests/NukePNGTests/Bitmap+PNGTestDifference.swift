import NukeCore

extension Bitmap {
    /// The largest difference between two bitmaps' samples (`Int.max` when their shapes differ).
    func pngTestMaxDifference(from other: Bitmap) -> Int {
        guard width == other.width, height == other.height, pixelFormat == other.pixelFormat else { return .max }
        var worst = 0
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<pixelFormat.channelCount {
                    worst = Swift.max(worst, abs(sample(x: x, y: y, channel: c) - other.sample(x: x, y: y, channel: c)))
                }
            }
        }
        return worst
    }
}
