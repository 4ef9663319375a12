import NukeCore

/// What a processor is told besides the image: the decode it follows.
public struct ImageProcessingContext: Sendable {
    /// The decode's options (its target size set by the plan, when a resize was folded into it).
    public var decodingContext: ImageDecodingContext?
    /// `true` for the final image, `false` for a progressive preview.
    public var isCompleted: Bool

    /// Creates a context.
    public init(decodingContext: ImageDecodingContext? = nil, isCompleted: Bool = true) {
        self.decodingContext = decodingContext
        self.isCompleted = isCompleted
    }
}
