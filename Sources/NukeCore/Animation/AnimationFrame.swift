/// One composited frame of an animation: the whole canvas after the frame was drawn.
public struct AnimationFrame: Sendable, Equatable {
    /// The frame's position, from 0.
    public var index: Int
    /// The canvas, `.rgba8` with straight alpha.
    public var canvas: Bitmap
    public var info: AnimationFrameInfo

    public init(index: Int, canvas: Bitmap, info: AnimationFrameInfo) {
        self.index = index
        self.canvas = canvas
        self.info = info
    }
}
