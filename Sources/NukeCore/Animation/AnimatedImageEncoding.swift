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

    /// Encodes every frame of `animation` into `stream`, as ``encode(_:)-(ImageAnimation)`` does.
    ///
    /// An encoder that writes frames as they come (NukeWebP) hands the file to the stream as it
    /// grows and goes back only to finish the header, so neither the frames nor the file are held
    /// whole. The default implementation calls ``encode(_:)-(ImageAnimation)`` and writes its result.
    /// - Throws: As ``encode(_:)-(ImageAnimation)``, or the stream's error; after an error the
    ///   stream holds a partial file.
    func encode(_ animation: ImageAnimation, to stream: inout some SeekableImageOutputStream) throws
}

extension AnimatedImageEncoding {
    public func encode(_ animation: ImageAnimation, to stream: inout some SeekableImageOutputStream) throws {
        let data = try encode(animation)
        try data.withUnsafeBytes { try stream.write($0) }
    }
}
