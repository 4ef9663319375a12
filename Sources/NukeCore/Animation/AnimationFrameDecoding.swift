/// What a format plugin implements so the core can play its animation lazily.
///
/// The core (`AnimationFrameSequence` with an `AnimationCompositor`) does the compositing;
/// the plugin only decodes each frame's own rectangle. Calls on one instance never overlap and
/// come in order: ``reset()``, then ``decodeFrame(at:)`` with increasing indices starting
/// from any frame ``AnimationFrameInfo/isIndependent`` marks (a seek), each index at most once
/// until the next reset. One instance serves one iterator, so it need not be `Sendable`.
public protocol AnimationFrameDecoding: AnyObject {
    /// The number of frames.
    var frameCount: Int { get }

    /// The info of frame `index` (`0..<frameCount`).
    func info(at index: Int) -> AnimationFrameInfo

    /// Decodes frame `index`'s own rectangle: an `.rgba8` straight-alpha bitmap of the
    /// rectangle's size (``AnimationFrameInfo/width`` × ``AnimationFrameInfo/height``).
    ///
    /// - Throws: ``ImageCodecError`` when the frame's data is corrupt or incomplete.
    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap

    /// Returns to the start, so decoding may begin again at an independent frame.
    func reset() throws(ImageCodecError)

    /// `true` when ``drawFrame(at:onto:)`` draws frame `index` straight onto the canvas. The
    /// default is `false`: the core then asks ``decodeFrame(at:)`` for the frame's bitmap.
    func drawsOntoCanvas(at index: Int) -> Bool

    /// Draws frame `index` straight onto the canvas, so that no bitmap of the frame is allocated:
    /// its rectangle clipped to the canvas, blended as its ``AnimationFrameInfo/blending`` says.
    ///
    /// GIF does this: its pixels are opaque or transparent, so source-over is writing the opaque
    /// ones as each row is decoded, and playing holds the canvas alone. The core calls it only when
    /// ``drawsOntoCanvas(at:)`` is `true`, after applying the previous frame's disposal and saving
    /// what a frame disposed to previous covers; the same ordering rules as ``decodeFrame(at:)``
    /// apply. Rows the data lacks are transparent, as in ``decodeFrame(at:)``.
    ///
    /// - Throws: ``ImageCodecError`` when the frame's data is corrupt or the decode is
    ///   cancelled; the canvas may then be partly drawn.
    func drawFrame(at index: Int, onto canvas: AnimationCanvas) throws(ImageCodecError)
}

extension AnimationFrameDecoding {
    /// `false`: frames are decoded to bitmaps of their own.
    public func drawsOntoCanvas(at index: Int) -> Bool { false }

    /// Never called when ``drawsOntoCanvas(at:)`` is `false`; traps if it is.
    public func drawFrame(at index: Int, onto canvas: AnimationCanvas) throws(ImageCodecError) {
        preconditionFailure("drawsOntoCanvas(at:) returned true without a drawFrame(at:onto:) to go with it")
    }
}

/// The canvas a plugin draws a frame onto (``AnimationFrameDecoding/drawFrame(at:onto:)``):
/// `width × height` pixels of straight-alpha RGBA, 4 bytes each, rows packed. The bytes may be
/// used only during the call.
public struct AnimationCanvas {
    /// The pixels, `width × height × 4` bytes.
    public let bytes: UnsafeMutableRawBufferPointer
    /// The canvas width in pixels.
    public let width: Int
    /// The canvas height in pixels.
    public let height: Int

    /// A canvas over `bytes` (`width × height × 4` of them), for the compositor that lends it.
    public init(bytes: UnsafeMutableRawBufferPointer, width: Int, height: Int) {
        precondition(bytes.count >= width * height * 4, "an animation canvas is width × height RGBA")
        self.bytes = bytes
        self.width = width
        self.height = height
    }
}
