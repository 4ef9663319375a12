/// The point of a cursor (CUR) image that is the pointer's position, from its top-left corner.
public struct CursorHotspot: Sendable, Hashable, CustomStringConvertible {
    /// Pixels from the left edge.
    public var x: Int
    /// Pixels from the top edge.
    public var y: Int

    /// Creates a hotspot at (`x`, `y`).
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}
