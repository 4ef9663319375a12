extension ImageComparison {
    /// How far decoded samples may be from the reference's.
    public struct Tolerance: Sendable, Hashable, CustomStringConvertible {
        /// The largest allowed absolute difference per sample, in the reference's units.
        public var maxDifference: Int
        /// The smallest allowed PSNR in dB, or `nil` for no bound.
        public var minimumPSNR: Double?

        public init(maxDifference: Int, minimumPSNR: Double? = nil) {
            self.maxDifference = maxDifference
            self.minimumPSNR = minimumPSNR
        }

        /// Identical samples.
        public static let exact = Tolerance(maxDifference: 0)

        /// At most `value` per sample.
        public static func maxDifference(_ value: Int) -> Tolerance { Tolerance(maxDifference: value) }

        /// At least `decibels` PSNR, any single difference allowed (for lossy codecs).
        public static func minimumPSNR(_ decibels: Double) -> Tolerance { Tolerance(maxDifference: .max, minimumPSNR: decibels) }

        public var description: String {
            var parts: [String] = []
            if maxDifference != .max { parts.append("max difference \(maxDifference)") }
            if let minimumPSNR { parts.append("PSNR ≥ \(minimumPSNR) dB") }
            return parts.isEmpty ? "any" : parts.joined(separator: ", ")
        }
    }
}
