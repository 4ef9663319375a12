/// What a format plugin implements so the core can play its animation lazily.
///
/// The core (``AnimationFrameSequence`` with an ``AnimationCompositor``) does the compositing;
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
}
