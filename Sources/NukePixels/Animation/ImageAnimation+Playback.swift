import NukeCore

/// Playing an animation: its frames decoded by the plugin's frame decoder and composited here.
extension ImageAnimation {
    /// Makes an iterator that decodes the frames in order, on demand.
    ///
    /// - Parameter memoryBudget: The most bytes the iterator may hold (canvas + saved copy +
    ///   one frame, see `iteratorBytes`); `nil` for no bound.
    /// - Throws: `ImageCodecError` `.limitExceeded` when even one canvas and frame do not fit
    ///   the budget; the plugin's error when its frame decoder cannot be made.
    public func makeIterator(memoryBudget: Int? = nil) throws(ImageCodecError) -> AnimationFrameSequence {
        if let memoryBudget {
            guard let needed = iteratorBytes, needed <= memoryBudget else {
                let needed = iteratorBytes.map { "\($0) bytes" } ?? "more than Int.max bytes"
                throw ImageCodecError(
                    .limitExceeded, stage: .decoding, format: type, codec: codec,
                    message: "playing the \(canvasSize) animation needs \(needed) (canvas, saved canvas and one frame), more than the memory budget of \(memoryBudget) bytes"
                )
            }
        }
        return AnimationFrameSequence(animation: self, decoder: try makeFrameDecoder())
    }

    /// The composited frame `index`, replayed from the nearest independent frame.
    ///
    /// For several frames, use one iterator: each call here starts a new one.
    /// - Throws: `ImageCodecError` from the plugin's frame decoder.
    public func frame(at index: Int) throws(ImageCodecError) -> AnimationFrame {
        precondition(frameInfos.indices.contains(index), "frame index out of range")
        let iterator = try makeIterator()
        try iterator.seek(to: index)
        guard let frame = try iterator.next() else {
            preconditionFailure("an iterator sought to a valid index yields a frame")
        }
        return frame
    }

    /// Decodes every frame eagerly, composited, with its stored duration.
    ///
    /// Meant for small animations: the frame count and `frames × canvas × 4` bytes are
    /// checked against `limits` (`ImageLimits.maxFrameCount`, `ImageLimits.maxDecodedBytes`)
    /// before anything is decoded.
    /// - Throws: `ImageCodecError` `.limitExceeded` (pointing to ``makeIterator(memoryBudget:)``)
    ///   or the plugin's decoding error.
    public func allFrames(limits: ImageLimits = .default) throws(ImageCodecError) -> [ImageFrame] {
        do {
            try limits.check(
                width: canvasSize.width, height: canvasSize.height, bytesPerPixel: 4,
                frameCount: frameCount, format: type, codec: codec
            )
        } catch {
            var error = error
            error.stage = .decoding
            error.message += "; decode the \(frameCount) frames lazily with ImageAnimation.makeIterator(memoryBudget:) instead of allFrames(limits:)"
            throw error
        }
        let iterator = try makeIterator()
        var frames: [ImageFrame] = []
        frames.reserveCapacity(frameCount)
        while let frame = try iterator.next() {
            frames.append(ImageFrame(bitmap: frame.canvas, duration: frame.info.duration))
        }
        return frames
    }

    /// An `Image` holding every frame (``allFrames(limits:)``) and the loop count.
    public func image(limits: ImageLimits = .default) throws(ImageCodecError) -> Image {
        Image(frames: try allFrames(limits: limits), loopCount: loopCount)
    }
}
