import NukeCore

extension ImageProcessors {
    /// Cuts the largest centred square out of an image and draws it in a circle, with an
    /// optional border, anti-aliased by each pixel's exact coverage; the output has alpha.
    public struct Circle: ImageProcessing, Hashable, CustomStringConvertible {
        /// The border drawn inside the circle's edge, if any.
        public let border: ImageProcessingOptions.Border?

        /// Creates the processor.
        public init(border: ImageProcessingOptions.Border? = nil) {
            self.border = border
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            let side = min(bitmap.width, bitmap.height)
            guard side > 0 else { return bitmap }
            let square = bitmap.cropped(to: ImageRect(x: (bitmap.width - side) / 2, y: (bitmap.height - side) / 2, width: side, height: side))
            return square.roundingCorners(radius: Double(side) / 2, border: border)
        }

        public var identifier: String { "com.github.kean/nuke/circle?border=\(border.map(String.init(describing:)) ?? "nil")" }

        public var description: String { "Circle(border: \(border.map(String.init(describing:)) ?? "none"))" }
    }
}
