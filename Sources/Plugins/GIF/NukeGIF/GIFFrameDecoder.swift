#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePluginKit

/// Decodes a complete GIF's frames for ``NukeCore/ImageAnimation``: random access by frame,
/// since ``GIFScanner`` found every frame's bytes, so a seek costs nothing to skip.
final class GIFFrameDecoder: AnimationFrameDecoding {
    private let bytes: Data
    private let frames: [GIFFrameRecord]
    private let handle: GIFDecoderHandle
    private let cancellation: ImageDecodingCancellation?
    /// Frame 0's pixels when the container already decoded them (see `GIFIncrementalDecoder`).
    private let firstFrame: Bitmap?

    init(bytes: Data, frames: [GIFFrameRecord], cancellation: ImageDecodingCancellation?, firstFrame: Bitmap? = nil) throws(ImageCodecError) {
        self.bytes = bytes
        self.frames = frames
        self.handle = try GIFDecoderHandle()
        self.cancellation = cancellation
        self.firstFrame = firstFrame
    }

    var frameCount: Int { frames.count }

    func info(at index: Int) -> AnimationFrameInfo { frames[index].info }

    /// Decodes frame `index`; checks cancellation before it and every 64 rows.
    ///
    /// The corresponding giflib functions are `DGifGetImageDesc` and `DGifGetLine`.
    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        if cancellation?.isCancelled == true {
            throw GIFLibrary.error(.cancelled, "cancelled before GIF frame \(index + 1)")
        }
        if index == 0, let firstFrame { return firstFrame }
        return try handle.decodeFrame(frames[index], index: index, in: bytes, cancellation: cancellation)
    }

    /// Every frame but a frame 0 decoded already is drawn row by row straight onto the canvas.
    func drawsOntoCanvas(at index: Int) -> Bool {
        !(index == 0 && firstFrame != nil)
    }

    /// Draws frame `index` onto the canvas; checks cancellation before it and every 64 rows.
    func drawFrame(at index: Int, onto canvas: AnimationCanvas) throws(ImageCodecError) {
        if cancellation?.isCancelled == true {
            throw GIFLibrary.error(.cancelled, "cancelled before GIF frame \(index + 1)")
        }
        try handle.drawFrame(frames[index], index: index, in: bytes, onto: canvas, cancellation: cancellation)
    }

    /// Nothing to do: every frame's bytes are known, so any frame can be decoded next.
    func reset() throws(ImageCodecError) {}
}
