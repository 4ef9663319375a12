import NukeCore
import NukePixels

extension ImageAnimation {
    /// This animation with `processors` run on every frame, lazily: each frame is decoded,
    /// composited, turned upright (`orientation`), processed and handed on one at a time, so an
    /// animated encoder (GIF, WebP, APNG: `AnimatedImageEncoding.encode(_:)`) transcodes it
    /// holding a few canvases whatever the frame count. Durations and the loop count are kept.
    ///
    /// Every frame of the result covers the whole canvas (the processed size), replaces it
    /// (`.source` blending) and is independent, so seeking costs one source seek. The first frame
    /// is processed here to learn the canvas size.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` from decoding or processing the first frame. A later
    ///   frame that processes to another size throws when it is decoded.
    public func processed(by processors: [any ImageProcessing], orientation: ImageOrientation = .up) throws -> ImageAnimation {
        let composition = ImageProcessors.Composition(processors)
        let first = try ProcessedFrameDecoder.process(frame(at: 0).canvas, orientation: orientation, processor: composition)
        let canvas = ImageSize(width: first.width, height: first.height)
        let infos = frameInfos.map { info in
            AnimationFrameInfo(x: 0, y: 0, width: canvas.width, height: canvas.height, duration: info.duration, disposal: .none, blending: .source)
        }
        let source = self
        return ImageAnimation(canvasSize: canvas, loopCount: loopCount, frameInfos: infos, type: type, codec: codec) { () throws(ImageCodecError) in
            ProcessedFrameDecoder(source: try source.makeIterator(), processor: composition, orientation: orientation, canvas: canvas)
        }
    }
}
