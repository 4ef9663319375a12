#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import NukeCore

/// An `IncrementalImageDecoding` for formats whose library needs the whole file (HEIF, SVG):
/// it keeps the pushed bytes and decodes them once, at ``finish()``, with `decode`.
///
/// It reports no header or preview; `next()` answers `.needsMoreData` until ``finish()``, then the
/// final image (decoded once, then repeated) or the error.
public final class WholeInputDecoder: IncrementalImageDecoding {
    private let decode: (Data) throws(ImageCodecError) -> ImageContainer
    private var pushed = PushedBytes()
    private var isFinished = false
    private var result: ImageContainer?

    /// - Parameter decode: Decodes the complete input.
    public init(decode: @escaping (Data) throws(ImageCodecError) -> ImageContainer) {
        self.decode = decode
    }

    public func push(_ bytes: Data) {
        precondition(!isFinished, "push after finish")
        pushed.append(bytes)
    }

    public func finish() { isFinished = true }

    public func next() throws(ImageCodecError) -> ImageDecodingEvent {
        if let result { return .final(result) }
        guard isFinished else { return .needsMoreData }
        let container = try decode(pushed.data)
        result = container
        return .final(container)
    }
}

/// A plugin whose library decodes only a complete file (HEIF, SVG, TIFF, BMP...): it writes the
/// decode of the whole input, and the kit keeps the bytes until the end (``WholeInputDecoder``)
/// and offers no previews (``ImageDecoderPlugin/decodesPartialData`` is `false`).
public protocol WholeFileDecoderPlugin: ImageDecoderPlugin {
    /// Decodes the complete input of a decode of `context`.
    static func decode(_ bytes: Data, context: ImageDecodingContext) throws(ImageCodecError) -> ImageContainer
}

extension WholeFileDecoderPlugin {
    /// A ``WholeInputDecoder`` that runs ``decode(_:context:)`` at `finish()`.
    public static func makeIncrementalDecoder(context: ImageDecodingContext) -> any IncrementalImageDecoding {
        WholeInputDecoder { (bytes) throws(ImageCodecError) in try decode(bytes, context: context) }
    }

    /// No previews: the library needs the whole file.
    public static var decodesPartialData: Bool { false }
}
