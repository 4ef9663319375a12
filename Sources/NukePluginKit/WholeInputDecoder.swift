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
