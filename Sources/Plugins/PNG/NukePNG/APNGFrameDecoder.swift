#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels

/// Decodes an APNG's frames on demand for the core's animation model: each frame re-framed as a
/// standalone PNG (``APNGStructure/standalonePNG(frame:in:)``) and decoded by libpng, as
/// straight-alpha RGBA of the frame's rectangle.
final class APNGFrameDecoder: AnimationFrameDecoding {
    private let structure: APNGStructure
    private let file: Data
    private let configuration: ImageDecodingContext
    /// Frame 0's pixels when the file's default image is frame 0 and was already decoded at full
    /// size for the container: playing from the start does not decode it again.
    private let firstFrame: Bitmap?

    init(structure: APNGStructure, file: Data, configuration: ImageDecodingContext, firstFrame: Bitmap? = nil) {
        self.structure = structure
        self.file = file
        self.firstFrame = firstFrame
        var configuration = configuration
        configuration.targetSize = nil   // frames are composited at full size
        self.configuration = configuration
    }

    var frameCount: Int { structure.frames.count }

    func info(at index: Int) -> AnimationFrameInfo { structure.frames[index].info }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        if index == 0, let firstFrame { return firstFrame }
        let png = structure.standalonePNG(frame: index, in: file)
        let session = try PNGDecodingSession(configuration: configuration)
        _ = try session.feed(png, forPreviews: false)
        return Self.framePixels(try session.finish().image.bitmap)
    }

    /// A decoded frame as the compositor takes it: straight-alpha RGBA, 8 bits.
    static func framePixels(_ bitmap: Bitmap) -> Bitmap {
        bitmap.pixelFormat == .rgba8 && bitmap.alphaMode == .straight ? bitmap : bitmap.converted(to: .rgba8)
    }

    func reset() throws(ImageCodecError) {}
}
