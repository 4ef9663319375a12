import NukeCore

extension ImageDecoderRegistry {
    /// Decodes with the plan `processors` allow (``NukeCore/ImageDecodingContext/planned(for:)``:
    /// a leading resize becomes the decode's target size) and runs them on the result: Nuke's
    /// decode-then-process, in one call.
    ///
    /// ```swift
    /// let thumbnail = try ImageDecoderRegistry.shared.decode(context, processors: [
    ///     ImageProcessors.Resize(size: ImageSize(width: 256, height: 256), crop: true),
    ///     ImageProcessors.RoundedCorners(radius: 16),
    /// ])
    /// ```
    ///
    /// The output stage (orientation, colour, premultiplied alpha) and the processors run in one
    /// plan: the processors at the start that only move pixels — the crop of a fill already
    /// decoded to cover its box, crops placed by size, turns and flips — run with the orientation
    /// as one copy of the pixels they keep; then the colour is converted, on those pixels only;
    /// then the other processors run, those that work pixel by pixel (a flatten) in their order
    /// after the moves. The output is the same as each step run on its own, in order.
    ///
    /// An animation's first frame is the container's image, processed; its
    /// `ImageContainer.animation` becomes the animation with every frame processed
    /// lazily (``NukeCore/ImageAnimation/processed(by:orientation:)``, turned upright and
    /// converted to `ImageDecodingContext.colorConversion` in the same way), ready for
    /// an animated encoder.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` from the decode or a processor.
    public func decode(_ context: ImageDecodingContext, processors: [any ImageProcessing]) throws -> ImageContainer {
        var planned = context.planned(for: processors)
        planned.defersOutputStage = !processors.isEmpty
        return try decode(planned).finished(by: processors, planned: planned)
    }
}

extension ImageContainer {
    /// Runs `processors` on a container decoded with `planned`, as
    /// ``NukeCore/ImageDecoderRegistry/decode(_:processors:)`` does after its decode, so that a
    /// decode that gets its pieces elsewhere (`ImageDecoderRegistry.streamingDecode(_:)`)
    /// finishes the same way. `planned` is ``NukeCore/ImageDecodingContext/planned(for:)`` of
    /// those processors with `ImageDecodingContext.defersOutputStage` set when there
    /// are any.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` from the output stage or a processor.
    public func finished(by processors: [any ImageProcessing], planned: ImageDecodingContext) throws -> ImageContainer {
        guard !processors.isEmpty else { return self }
        var container = try processed(by: processors, finishing: planned)
        if let animation = container.animation {
            let orientation = container.userInfo[.appliedOrientationKey] as? ImageOrientation ?? .up
            // The frames come from the animation, not the output stage: its colour step, here.
            let color: [any ImageProcessing] = planned.colorConversion.map { [ImageProcessors.ColorConversion(to: $0)] } ?? []
            container.animation = try animation.processed(by: color + processors, orientation: orientation)
        }
        return container
    }
}

extension ImageContainer {
    /// Finishes a container decoded with `ImageDecodingContext.defersOutputStage` and
    /// runs `processors` on it in one plan, as ``NukeCore/ImageDecoderRegistry/decode(_:processors:)``
    /// does: the leading processors that only move pixels with the orientation as one copy, then
    /// the rest of `context`'s output stage (colour, premultiplied alpha) on the pixels kept, then
    /// the other processors. The output is the same as the output stage run first, then each
    /// processor. A container of several frames is finished first, then processed.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` from the output stage or a processor.
    public func processed(by processors: [any ImageProcessing], finishing context: ImageDecodingContext) throws -> ImageContainer {
        var container = self
        let processing = ImageProcessingContext(decodingContext: context, isCompleted: true)
        guard container.image.frames.count == 1, container.image.width > 0, container.image.height > 0 else {
            try container.finishOutputStage(for: context)
            return try ImageProcessors.Composition(processors).process(container, context: processing)
        }
        // The moves first, with the orientation; then the colour, on the pixels kept.
        let orientation = context.appliesOrientation ? container.image.orientation : .up
        let bitmap = container.image.bitmap
        let (moves, rest) = PixelMoves.fold(storedSize: ImageSize(width: bitmap.width, height: bitmap.height),
                                            orientation: orientation, processors: processors)
        container.image.bitmap = moves.apply(to: bitmap)
        if orientation != .up {
            container.image.orientation = .up
            container.userInfo[.appliedOrientationKey] = orientation
        }
        try container.finishOutputStage(for: context)
        return try ImageProcessors.Composition(rest).process(container, context: processing)
    }
}
