import NukeCore

extension ImageProcessors {
    /// Rounds the corners of an image to quarter circles of a radius in pixels, with an optional
    /// border, anti-aliased by each pixel's exact coverage; the output has alpha
    /// (`Bitmap.roundingCorners(radius:border:)`).
    public struct RoundedCorners: ImageProcessing, Hashable, CustomStringConvertible {
        /// The corner radius in pixels (at most half the shorter side is used).
        public let radius: Double
        /// The border drawn inside the edge, if any.
        public let border: ImageProcessingOptions.Border?

        /// Rounds the corners to `radius` pixels (0 or more, else a trap).
        public init(radius: Double, border: ImageProcessingOptions.Border? = nil) {
            self.init(radius: radius, unit: .pixels, border: border)
        }

        /// Rounds the corners to `radius` in `unit`s, as Nuke's `RoundedCorners(radius:unit:border:)`
        /// (`.points(scale:)`: `scale` pixels per point).
        public init(radius: Double, unit: ImageProcessingOptions.Unit, border: ImageProcessingOptions.Border? = nil) {
            precondition(radius >= 0 && radius.isFinite, "RoundedCorners: the radius is 0 or more")
            self.radius = unit.pixels(radius)
            self.border = border
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            bitmap.roundingCorners(radius: radius, border: border)
        }

        public var identifier: String {
            "com.github.kean/nuke/rounded_corners?radius=\(radius),border=\(border.map(String.init(describing:)) ?? "nil")"
        }

        public var description: String { "RoundedCorners(radius: \(radius) pixels, border: \(border.map(String.init(describing:)) ?? "none"))" }
    }
}
