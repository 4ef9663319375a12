import NukeCore

extension ImageDecodingContext {
    /// This context with what `processors` let the decode do for them: the first processor that
    /// has a ``ImageProcessing/decodeTarget(for:)`` — after any leading rotations and flips,
    /// which only move pixels (a quarter turn turns its box) — sets `targetSize` and
    /// `contentMode`, so a fill decodes to cover its box (a codec reducing natively, JPEG's
    /// N/8, libwebp's scaler…) and the resize then only crops. The orientation is applied
    /// (`appliesOrientation`) so that processors see the image upright. A context that already
    /// has a target size keeps it.
    public func planned(for processors: [any ImageProcessing]) -> ImageDecodingContext {
        var context = self
        guard !processors.isEmpty else { return context }
        context.appliesOrientation = true
        guard context.targetSize == nil else { return context }
        var turned = false
        for processor in ImageProcessors.Composition(processors).processors {
            if let target = processor.decodeTarget(for: nil) {
                let size = target.size
                context.targetSize = turned ? ImageSize(width: size.height, height: size.width) : size
                context.contentMode = target.contentMode
                return context
            }
            if let rotate = processor as? ImageProcessors.Rotate {
                if !rotate.quarterTurns.isMultiple(of: 2) { turned.toggle() }
            } else if !(processor is ImageProcessors.Flip) {
                break
            }
        }
        return context
    }
}
