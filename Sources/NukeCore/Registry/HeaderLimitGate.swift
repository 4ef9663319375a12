#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageLimits {
    /// Checks what a header declares — dimensions, pixel count, frames, and (for a decode at full
    /// size) the decoded bytes at the file's own channel count — against the limits. For a
    /// scalable image (``ImageHeader/isScalable``) they are those of the render size.
    ///
    /// The registry calls it with the format's header hook before any decoder sees the data, so
    /// a decoder registered by an app (a catch-all, say) cannot decode past the caller's limits.
    /// Decoders still check what they allocate themselves, in their output format.
    ///
    /// - Parameters:
    ///   - header: What the header hook read.
    ///   - context: The decode: its target size (a scaled decode's bytes are the decoder's to
    ///     check) and its high-bit-depth choice.
    ///   - inputByteCount: The size of the complete input, when the decode has all of it (for
    ///     ``maxDecodedBytesPerInputByte``); `nil` otherwise.
    /// - Throws: ``ImageCodecError`` `.limitExceeded` (or `.corrupt` for an empty size).
    public func check(header: ImageHeader, context: ImageDecodingContext, inputByteCount: Int?) throws(ImageCodecError) {
        let samples = max(1, header.componentCount ?? 1) * ((header.bitDepth ?? 8) > 8 && context.prefersHighBitDepth ? 2 : 1)
        // Pages that are not an animation (a TIFF's) are decoded one at a time.
        let frames = header.isAnimated ? max(1, header.frameCount ?? 1) : 1
        if header.isScalable {
            // Drawn at the size asked for: that is what the decode allocates, whatever the input's size.
            let size = ImageSize.rendered(width: Double(header.width), height: Double(header.height), for: context.targetSize, contentMode: context.contentMode)
            try check(width: size.width, height: size.height, bytesPerPixel: samples, frameCount: frames, format: header.type, codec: nil, inputByteCount: nil)
            return
        }
        let scaled = context.targetSize != nil
        try check(width: header.width, height: header.height, bytesPerPixel: scaled ? 0 : samples,
                  frameCount: frames, format: header.type, codec: nil, inputByteCount: scaled ? nil : inputByteCount)
    }
}

/// An incremental decoder that sees no byte until the format's header hook has read the header
/// and the core has checked it against the decode's limits (``ImageLimits/check(header:context:inputByteCount:)``).
///
/// Bytes wait here (headers are small: a JPEG's frame header may follow 64 KiB of EXIF) until
/// the hook answers; a hook that still needs more after 1 MiB, or cannot read the header, lets
/// them through for the decoder to judge.
public struct HeaderLimitGate: IncrementalImageDecoding {
    private var inner: any IncrementalImageDecoding
    private let context: ImageDecodingContext
    private let parse: (Data) -> ImageHeader.ParseResult
    private let codec: String?
    private var held = Data()
    private var isOpen = false
    private var isFinished = false
    private var failure: ImageCodecError?

    /// How many bytes wait at most for a hook that keeps asking for more.
    static let patience = 1 << 20

    /// - Parameters:
    ///   - inner: The decoder the bytes go to once the header is within the limits.
    ///   - context: The decode, whose limits are checked.
    ///   - codec: The codec a limit error names.
    ///   - parse: The format's header hook.
    public init(_ inner: any IncrementalImageDecoding, context: ImageDecodingContext, codec: String?, parse: @escaping (Data) -> ImageHeader.ParseResult) {
        self.inner = inner
        self.context = context
        self.codec = codec
        self.parse = parse
    }

    /// Holds the bytes until the header is read and checked, then passes them on.
    public mutating func push(_ bytes: Data) {
        if isOpen {
            inner.push(bytes)
            return
        }
        if held.isEmpty { held = bytes } else { held.append(bytes) }
        evaluate()
    }

    /// Decides the gate with what arrived, then finishes the decoder behind it.
    public mutating func finish() {
        isFinished = true
        if !isOpen { evaluate() }
        if failure == nil { inner.finish() }
    }

    /// The limit error, `needsMoreData` while the gate is shut, else the decoder's event.
    public mutating func next() throws -> ImageDecodingEvent {
        if let failure { throw failure }
        guard isOpen else {
            // Only before the end: `finish()` opens the gate or fails it.
            return .needsMoreData
        }
        return try inner.next()
    }

    /// Passed to the decoder behind the gate.
    public mutating func setWantsPreviews(_ wantsPreviews: Bool) {
        inner.setWantsPreviews(wantsPreviews)
    }

    /// Passed to the decoder behind the gate.
    public mutating func setRowSink(_ sink: any ImageRowSink) -> Bool {
        inner.setRowSink(sink)
    }

    private mutating func evaluate() {
        switch parse(held) {
        case .parsed(let header):
            do {
                try context.limits.check(header: header, context: context, inputByteCount: isFinished ? held.count : nil)
            } catch {
                var error = error
                if let codec { error.codec = codec }
                failure = error
                return
            }
            open()
        case .needsMoreData where !isFinished && held.count < Self.patience:
            return
        default:
            open()
        }
    }

    private mutating func open() {
        isOpen = true
        if !held.isEmpty { inner.push(held) }
        held = Data()
    }
}
