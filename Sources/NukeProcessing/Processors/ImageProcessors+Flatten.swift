import NukeCore
import NukePixels

extension ImageProcessors {
    /// Composites an image with alpha onto an opaque colour (NukePixels' `flattened(onto:)`:
    /// `(c·a + b·(255 − a)) / 255`, as Pillow's `paste` with a mask and vips' `flatten`).
    ///
    /// The output has no alpha: 8-bit RGB, or 8-bit gray for gray input (16-bit input with alpha
    /// becomes 8-bit). An image without alpha is returned unchanged.
    public struct Flatten: ImageProcessing, Hashable, CustomStringConvertible {
        /// The colour under the image.
        public let color: RGBColor

        /// Flattens onto `color`.
        public init(color: RGBColor) {
            self.color = color
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            bitmap.pixelFormat.hasAlpha ? bitmap.flattened(onto: color) : bitmap
        }

        public var identifier: String { "com.github.kean/nuke/flatten?color=\(color)" }

        public var description: String { "Flatten(color: \(color))" }
    }
}
