/// One composited frame of an animation: the whole canvas after the frame was drawn.
public struct AnimationFrame: Sendable, Equatable {
    /// The frame's position, from 0.
    public var index: Int
    /// The canvas, `.rgba8` with straight alpha.
    public var canvas: Bitmap
    /// The frame's info: its rectangle, duration, disposal and blending.
    public var info: AnimationFrameInfo

    /// Creates a frame: frame `index` of the animation, with the canvas after it was drawn.
    public init(index: Int, canvas: Bitmap, info: AnimationFrameInfo) {
        self.index = index
        self.canvas = canvas
        self.info = info
    }
}
