#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Decodes an APNG's frames on demand for the core's animation model: each frame re-framed as a
/// standalone PNG (``APNGStructure/standalonePNG(frame:in:)``) and decoded by libpng, as
/// straight-alpha RGBA of the frame's rectangle.
final class APNGFrameDecoder: AnimationFrameDecoding {
    private let structure: APNGStructure
    private let file: Data
    private let configuration: PNGDecodingSession.Configuration

    init(structure: APNGStructure, file: Data, configuration: PNGDecodingSession.Configuration) {
        self.structure = structure
        self.file = file
        var configuration = configuration
        configuration.targetSize = nil   // frames are composited at full size
        self.configuration = configuration
    }

    var frameCount: Int { structure.frames.count }

    func info(at index: Int) -> AnimationFrameInfo { structure.frames[index].info }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        let png = structure.standalonePNG(frame: index, in: file)
        let session = try PNGDecodingSession(configuration: configuration)
        _ = try session.feed(png, forPreviews: false)
        let bitmap = try session.finish().image.bitmap
        return bitmap.pixelFormat == .rgba8 && bitmap.alphaMode == .straight ? bitmap : bitmap.converted(to: .rgba8)
    }

    func reset() throws(ImageCodecError) {}
}
