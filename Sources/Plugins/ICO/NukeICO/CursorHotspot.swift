/// The point of a cursor (CUR) image that is the pointer's position, from its top-left corner.
public struct CursorHotspot: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}
