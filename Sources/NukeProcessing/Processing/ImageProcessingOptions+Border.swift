import NukeCore

extension ImageProcessingOptions {
    /// A border drawn inside the edge of a shape (``ImageProcessors/RoundedCorners``,
    /// ``ImageProcessors/Circle``), anti-aliased like the shape.
    public struct Border: Sendable, Hashable, CustomStringConvertible {
        /// The border's colour (opaque).
        public var color: RGBColor
        /// The border's width in pixels; more than 0.
        public var width: Double

        /// Creates a border `width` pixels wide (more than 0, else a trap).
        public init(color: RGBColor, width: Double = 1) {
            self.init(color: color, width: width, unit: .pixels)
        }

        /// Creates a border `width` `unit`s wide, as Nuke's `Border(color:width:unit:)`.
        public init(color: RGBColor, width: Double, unit: ImageProcessingOptions.Unit) {
            precondition(width > 0 && width.isFinite, "a border is more than 0 pixels wide")
            self.color = color
            self.width = unit.pixels(width)
        }

        public var description: String { "Border(color: \(color), width: \(width) pixels)" }
    }
}
