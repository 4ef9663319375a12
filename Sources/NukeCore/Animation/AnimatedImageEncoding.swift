import Foundation

/// An encoder that writes animations (GIF, APNG, animated WebP).
///
/// Two inputs, one model: `encode(_:)` takes an ``Image`` whose ``Image/frames``
/// are the composited canvases with their durations and whose ``Image/loopCount`` applies (an
/// eager animation, as decoded by `allFrames(limits:)`); ``encode(_:)-(ImageAnimation)``
/// takes an ``ImageAnimation`` and draws its frames one at a time from an iterator, so a long
/// animation is transcoded without ever holding every frame.
public protocol AnimatedImageEncoding: ImageEncoding {
    /// Encodes every frame of `animation`, with its stored duration and loop count.
    ///
    /// - Throws: ``ImageCodecError``: the frame decoder's errors, or `.encodingFailed`.
    func encode(_ animation: ImageAnimation) throws -> Data
}
