import NukeCore

extension ImageDecodingContext {
    /// This context with what `processors` let the decode do for them: the first processor's
    /// ``ImageProcessing/decodeTarget(for:)`` becomes ``targetSize`` and ``contentMode`` — a fill
    /// decodes to cover its box (a codec reducing natively, JPEG's N/8, libwebp's scaler…) and the
    /// resize then only crops — and the orientation is applied (``appliesOrientation``) so that
    /// processors see the image upright. A context that already has a target size keeps it.
    public func planned(for processors: [any ImageProcessing]) -> ImageDecodingContext {
        var context = self
        guard !processors.isEmpty else { return context }
        context.appliesOrientation = true
        if context.targetSize == nil, let target = processors.first?.decodeTarget(for: nil) {
            context.targetSize = target.size
            context.contentMode = target.contentMode
        }
        return context
    }
}
