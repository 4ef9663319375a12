import NukeCore

/// Options shared by several processors, as Nuke's `ImageProcessingOptions`.
public enum ImageProcessingOptions {
    /// How an image covers a box: `.aspectFill` (cover it) or `.aspectFit` (fit inside it).
    public typealias ContentMode = ImageDecodingContext.ContentMode

    /// The unit of a processor's sizes, as Nuke's `ImageProcessingOptions.Unit`. Nuke's points are
    /// multiplied by the screen's scale; a server has no screen, so points name their scale: a
    /// 64 × 64-point avatar for a 3× display is `Resize(size: ..., unit: .points(scale: 3))`, 192 ×
    /// 192 pixels. Processors convert at creation, so identifiers (and cache keys) are in pixels.
    public enum Unit: Sendable, Hashable, CustomStringConvertible {
        /// Pixels (the default).
        case pixels
        /// Points of a display with `scale` pixels per point (more than 0).
        case points(scale: Double)

        /// Pixels per unit.
        public var scale: Double {
            switch self {
            case .pixels: 1
            case .points(let scale): scale
            }
        }

        /// `value` units in pixels.
        public func pixels(_ value: Double) -> Double {
            precondition(scale > 0 && scale.isFinite, "ImageProcessingOptions.Unit: a points scale is more than 0")
            return value * scale
        }

        /// A length of `value` units in whole pixels (at least 1).
        func wholePixels(_ value: Double) -> Int {
            let pixels = pixels(value)
            precondition(pixels.isFinite && pixels < Double(Int32.max), "ImageProcessingOptions.Unit: \(value) \(self) is too large")
            return max(1, Int(pixels.rounded()))
        }

        public var description: String {
            switch self {
            case .pixels: "pixels"
            case .points(let scale): "points at \(scale)×"
            }
        }
    }
}
