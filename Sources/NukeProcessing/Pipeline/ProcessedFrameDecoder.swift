import NukeCore
import NukePixels

/// The frame decoder of a processed animation (``NukeCore/ImageAnimation/processed(by:orientation:)``):
/// plays the source animation and processes each canvas as it is asked for.
final class ProcessedFrameDecoder: AnimationFrameDecoding {
    private let source: AnimationFrameSequence
    private let processor: ImageProcessors.Composition
    private let orientation: ImageOrientation
    private let canvas: ImageSize

    init(source: AnimationFrameSequence, processor: ImageProcessors.Composition, orientation: ImageOrientation, canvas: ImageSize) {
        self.source = source
        self.processor = processor
        self.orientation = orientation
        self.canvas = canvas
    }

    var frameCount: Int { source.animation.frameCount }

    func info(at index: Int) -> AnimationFrameInfo {
        let info = source.animation.frameInfos[index]
        return AnimationFrameInfo(x: 0, y: 0, width: canvas.width, height: canvas.height, duration: info.duration, disposal: .none, blending: .source)
    }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        if source.nextIndex != index { try source.seek(to: index) }
        guard let frame = try source.next() else {
            throw ImageCodecError(.internalFailure, stage: .processing, format: source.animation.type, message: "frame \(index) of \(frameCount) is missing")
        }
        let bitmap: Bitmap
        do {
            bitmap = try Self.process(frame.canvas, orientation: orientation, processor: processor)
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.decoderFailed, stage: .processing, format: source.animation.type,
                                  message: "processing frame \(index): \(error)", underlyingError: error)
        }
        guard bitmap.width == canvas.width, bitmap.height == canvas.height else {
            throw ImageCodecError.processing("frame \(index) processed to \(bitmap.width)×\(bitmap.height), the first frame to \(canvas): an animation's frames share one size")
        }
        return bitmap
    }

    func reset() throws(ImageCodecError) {
        try source.rewind()
    }

    /// A canvas turned upright and processed, as the compositor takes frames: 8-bit RGBA, straight
    /// alpha. The processors at the start that only move pixels run with the orientation as one
    /// copy (``PixelMoves``).
    static func process(_ canvas: Bitmap, orientation: ImageOrientation, processor: ImageProcessors.Composition) throws -> Bitmap {
        guard canvas.width > 0, canvas.height > 0 else { return try processor.process(canvas).unpremultiplied().converted(to: .rgba8) }
        let (moves, rest) = PixelMoves.fold(storedSize: ImageSize(width: canvas.width, height: canvas.height),
                                            orientation: orientation, processors: processor.processors)
        let processed = try ImageProcessors.Composition(rest).process(moves.apply(to: canvas))
        return processed.unpremultiplied().converted(to: .rgba8)
    }
}
