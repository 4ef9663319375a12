import NukeCore

/// Turns one image into another: resize, crop, round corners, blur… Nuke's `ImageProcessing`,
/// on NukeCore's ``NukeCore/Bitmap``.
///
/// Implement ``process(_:)-(Bitmap)`` and ``identifier``; the other requirements have defaults.
/// A processor sees upright pixels in the output colour: the decode's output stage (orientation,
/// colour conversion) runs first. Every frame of an animation goes through the same processor,
/// one at a time (``NukeCore/ImageAnimation/processed(by:orientation:)``).
///
/// ```swift
/// struct Sepia: ImageProcessing, Hashable {
///     var identifier: String { "com.example/sepia" }
///     func process(_ bitmap: Bitmap) throws -> Bitmap { ... }
/// }
/// ```
public protocol ImageProcessing: Sendable {
    /// Returns the processed bitmap.
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` (stage `.processing`) when the input cannot be
    ///   processed, such as a crop outside the image.
    func process(_ bitmap: Bitmap) throws -> Bitmap

    /// Returns the processed container: by default every frame of its image through
    /// ``process(_:)-(Bitmap)``, durations and metadata kept.
    func process(_ container: ImageContainer, context: ImageProcessingContext) throws -> ImageContainer

    /// A string that identifies the processor and its parameters: two processors with the same
    /// identifier make the same output from the same input, so caches key on it. Reverse-DNS
    /// names, as Nuke's: `"com.github.kean/nuke/resize?s=256x256,cm=fill,crop=true,upscale=false"`.
    var identifier: String { get }

    /// The identifier in a form that is cheaper to compare than ``identifier``; by default
    /// ``identifier`` itself, or the processor when it is `Hashable`.
    var hashableIdentifier: AnyHashable { get }

    /// What the decode can do for this processor when it runs first: a size to decode to, so a
    /// codec reduces natively instead of decoding at full size. `nil` (the default) when none.
    /// The processor still runs on the decoded image and must give the same output either way.
    func decodeTarget(for orientedSize: ImageSize?) -> ImageProcessingDecodeTarget?
}

extension ImageProcessing {
    public func process(_ container: ImageContainer, context: ImageProcessingContext) throws -> ImageContainer {
        var container = container
        container.image = try process(container.image)
        return container
    }

    /// Every frame of `image` processed, with its duration; orientation, colour and loop count kept.
    public func process(_ image: Image) throws -> Image {
        var image = image
        for index in image.frames.indices {
            image.frames[index].bitmap = try process(image.frames[index].bitmap)
        }
        return image
    }

    public var hashableIdentifier: AnyHashable { identifier }

    public func decodeTarget(for orientedSize: ImageSize?) -> ImageProcessingDecodeTarget? { nil }
}

extension ImageProcessing where Self: Hashable {
    public var hashableIdentifier: AnyHashable { self }
}
