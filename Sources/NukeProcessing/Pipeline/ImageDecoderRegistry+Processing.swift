import NukeCore

extension ImageDecoderRegistry {
    /// Decodes with the plan `processors` allow (``NukeCore/ImageDecodingContext/planned(for:)``:
    /// a leading resize becomes the decode's target size) and runs them on the result, after the
    /// output stage (orientation, colour): Nuke's decode-then-process, in one call.
    ///
    /// ```swift
    /// let thumbnail = try ImageDecoderRegistry.shared.decode(context, processors: [
    ///     ImageProcessors.Resize(size: ImageSize(width: 256, height: 256), crop: true),
    ///     ImageProcessors.RoundedCorners(radius: 16),
    /// ])
    /// ```
    ///
    /// An animation's first frame is the container's image, processed; its
    /// ``NukeCore/ImageContainer/animation`` becomes the animation with every frame processed
    /// lazily (``NukeCore/ImageAnimation/processed(by:orientation:)``, turned upright and
    /// converted to ``NukeCore/ImageDecodingContext/colorConversion`` first), ready for an
    /// animated encoder.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` from the decode or a processor.
    public func decode(_ context: ImageDecodingContext, processors: [any ImageProcessing]) throws -> ImageContainer {
        let planned = context.planned(for: processors)
        var container = try decode(planned)
        guard !processors.isEmpty else { return container }
        let processingContext = ImageProcessingContext(decodingContext: planned, isCompleted: true)
        let orientation = container.userInfo[.appliedOrientationKey] as? ImageOrientation ?? .up
        container = try ImageProcessors.Composition(processors).process(container, context: processingContext)
        if let animation = container.animation {
            // The frames come from the animation, not the output stage: its colour step, here.
            let color: [any ImageProcessing] = planned.colorConversion.map { [ImageProcessors.ColorConversion(to: $0)] } ?? []
            container.animation = try animation.processed(by: color + processors, orientation: orientation)
        }
        return container
    }
}
