import NukeCore

extension ImageProcessors {
    /// Blurs an image with a Gaussian (`Bitmap.blurred(sigma:)`: Pillow's algorithm, three
    /// extended box passes per axis, O(1) per pixel whatever the radius), in any pixel format.
    public struct GaussianBlur: ImageProcessing, Hashable, CustomStringConvertible {
        /// The Gaussian's standard deviation in pixels, as Pillow's `GaussianBlur(radius)` and
        /// Core Image's `CIGaussianBlur` `inputRadius` take it.
        public let radius: Double

        /// Blurs with a standard deviation of `radius` pixels (default 8, as Nuke's; 0 or more,
        /// else a trap).
        public init(radius: Double = 8) {
            precondition(radius >= 0 && radius.isFinite, "GaussianBlur: the radius is 0 or more")
            self.radius = radius
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            bitmap.blurred(sigma: radius)
        }

        public var identifier: String { "com.github.kean/nuke/gaussian_blur?radius=\(radius)" }

        public var description: String { "GaussianBlur(radius: \(radius))" }
    }
}
