/// A rectangle of pixels: its top-left corner and size.
public struct ImageRect: Sendable, Hashable, CustomStringConvertible {
    /// The left edge, in pixels from the image's left.
    public var x: Int
    /// The top edge, in pixels from the image's top.
    public var y: Int
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle's size.
    public var size: ImageSize { ImageSize(width: width, height: height) }

    /// `true` when the rectangle is not empty and lies inside an image of `size`.
    public func isInside(_ size: ImageSize) -> Bool {
        width > 0 && height > 0 && x >= 0 && y >= 0 && x <= size.width - width && y <= size.height - height
    }

    public var description: String { "\(width)×\(height)+\(x)+\(y)" }
}
