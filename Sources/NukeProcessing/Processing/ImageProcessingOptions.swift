import NukeCore

/// Options shared by several processors, as Nuke's `ImageProcessingOptions`.
public enum ImageProcessingOptions {
    /// How an image covers a box: `.aspectFill` (cover it) or `.aspectFit` (fit inside it).
    public typealias ContentMode = ImageDecodingContext.ContentMode
}
