import NukeCore

/// Plays an `ImageAnimation`: decodes and composites its frames in order, on demand.
///
/// Made by `ImageAnimation.makeIterator(memoryBudget:)`. Each ``next()`` decodes one frame
/// (O(1) frames of work) and returns the canvas after it. Not `Sendable`: one iterator belongs
/// to one task; make one per consumer.
public final class AnimationFrameSequence {
    /// The animation played.
    public let animation: ImageAnimation
    private let decoder: any AnimationFrameDecoding
    private var compositor: AnimationCompositor
    /// The index ``next()`` returns.
    public private(set) var nextIndex = 0
    /// `true` until the first decode after a reset (the decoder needs no reset then).
    private var isFresh = true

    init(animation: ImageAnimation, decoder: any AnimationFrameDecoding) {
        precondition(decoder.frameCount == animation.frameCount, "the frame decoder disagrees with the animation's frame count")
        self.animation = animation
        self.decoder = decoder
        self.compositor = AnimationCompositor(width: animation.canvasSize.width, height: animation.canvasSize.height)
    }

    /// Decodes the next frame and returns the canvas after it, or `nil` after the last frame.
    ///
    /// - Throws: `ImageCodecError` from the plugin's frame decoder; the iterator then stays
    ///   at the failing frame.
    public func next() throws(ImageCodecError) -> AnimationFrame? {
        guard nextIndex < animation.frameCount else { return nil }
        let index = nextIndex
        let info = animation.frameInfos[index]
        let decoder = self.decoder
        let canvas: Bitmap
        if decoder.drawsOntoCanvas(at: index) {
            isFresh = false
            canvas = try compositor.draw(info: info) { (target) throws(ImageCodecError) in try decoder.drawFrame(at: index, onto: target) }
        } else {
            // A frame that replaces the whole canvas becomes it: the old one goes first, so the
            // two are never held together.
            if compositor.replacesCanvas(info) { compositor.reset() }
            let pixels = try decoder.decodeFrame(at: index)
            isFresh = false
            canvas = compositor.draw(pixels, info: info)
        }
        nextIndex += 1
        return AnimationFrame(index: index, canvas: canvas, info: info)
    }

    /// Positions the iterator so ``next()`` returns frame `index`.
    ///
    /// Going forward continues from where it is when no independent frame lies in between;
    /// otherwise the canvas is reset and frames are replayed from the last independent frame
    /// at or before `index`.
    /// - Throws: `ImageCodecError` from decoding the replayed frames.
    public func seek(to index: Int) throws(ImageCodecError) {
        precondition(index >= 0 && index <= animation.frameCount, "seek index out of range")
        let infos = animation.frameInfos
        var start = index == infos.count ? max(index - 1, 0) : index
        while start > 0, !infos[start].isIndependent { start -= 1 }
        if !(nextIndex <= index && nextIndex >= start) {
            if !isFresh { try decoder.reset() }
            isFresh = true
            compositor.reset()
            nextIndex = start
        }
        while nextIndex < index {
            _ = try next()
        }
    }

    /// Starts again from the first frame.
    public func rewind() throws(ImageCodecError) {
        try seek(to: 0)
    }
}
