import NukeCore

/// A size and content mode a decode is asked for on a processor's behalf
/// (``ImageProcessing/decodeTarget(for:)``): `ImageDecodingContext.targetSize` and
/// `ImageDecodingContext.contentMode`.
public struct ImageProcessingDecodeTarget: Sendable, Hashable {
    /// The box, in pixels of the upright image.
    public var size: ImageSize
    /// `.aspectFill` to cover the box (a fill that crops), `.aspectFit` to fit inside it.
    public var contentMode: ImageDecodingContext.ContentMode

    /// Creates a target.
    public init(size: ImageSize, contentMode: ImageDecodingContext.ContentMode) {
        self.size = size
        self.contentMode = contentMode
    }
}
