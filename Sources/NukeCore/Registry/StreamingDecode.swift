#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageDecoderRegistry {
    /// A decode of one complete file whose pieces are handed over as they arrive and dropped:
    /// memory holds what the decoder keeps (a few rows for PNG, libjpeg's unread tail) rather
    /// than the whole input. The caller drives it, so it can wait for the next piece however it
    /// likes: a socket read, an `await` between pieces, a file read.
    ///
    /// ```swift
    /// var decode = try ImageDecoderRegistry.shared.streamingDecode(context)   // context.data: the first piece
    /// for piece in pieces {
    ///     if let image = try decode.push(piece) { return image }              // complete early
    /// }
    /// return try decode.finish()
    /// ```
    ///
    /// The first decoder that accepts the context (its data: the first bytes, enough to sniff)
    /// is the only one tried: pieces already given away cannot be offered to another. Its limits
    /// are checked against the header as the registry's other decodes do, and its verdicts are
    /// final: the piece that shows the data corrupt, over a limit or cancelled throws.
    ///
    /// Not `Sendable`: one thread at a time, as any ``IncrementalImageDecoding``; a caller that
    /// hops between threads between pieces keeps it behind a lock.
    public struct StreamingDecode {
        /// The codec decoding the pieces.
        public let codec: ImageCodecInfo
        private var decoder: any IncrementalImageDecoding
        private let format: ImageType?
        /// The decoder took the row sink: the final image was handed over row by row.
        let streamsRows: Bool
        /// The final image or an error was reported: nothing more may be pushed.
        public private(set) var isEnded = false

        init(registry: ImageDecoderRegistry, context: ImageDecodingContext, rowsTo sink: (any ImageRowSink)?) throws(ImageCodecError) {
            // The context's data is only the first piece, not the complete input.
            var context = context
            context.isCompleted = false
            guard let (made, info) = registry.incrementalDecoder(for: context) else { throw registry.noDecoderError(for: context) }
            var decoder = made
            decoder.setWantsPreviews(false)
            streamsRows = sink.map { decoder.setRowSink($0) } ?? false
            if !context.data.isEmpty { decoder.push(context.data) }
            self.decoder = decoder
            codec = info
            format = context.type
        }

        /// Hands the decoder the next piece and decodes as far as the pieces so far allow (an
        /// empty piece: the first piece, given with the context).
        ///
        /// - Returns: The final image when the pieces so far are complete (PNG's `IEND`, every
        ///   scan a decode to size reads); the rest of the input is then not needed. Otherwise `nil`.
        /// - Throws: ``ImageCodecError`` as soon as a piece shows the data corrupt, over a limit or
        ///   the decode cancelled.
        public mutating func push(_ piece: Data) throws(ImageCodecError) -> ImageContainer? {
            precondition(!isEnded, "push(_:) after the final image or an error")
            if !piece.isEmpty { decoder.push(piece) }
            return try ended { (decoder: inout any IncrementalImageDecoding) in
                while true {
                    switch try decoder.next() {
                    case .needsMoreData: return nil
                    case .final(let container): return container
                    case .header, .preview: continue
                    }
                }
            }
        }

        /// Says that no more pieces will come and returns the final image.
        ///
        /// - Throws: ``ImageCodecError``: `.incomplete` when the pieces end early, or any verdict.
        public mutating func finish() throws(ImageCodecError) -> ImageContainer {
            precondition(!isEnded, "finish() after the final image or an error")
            let format = format
            return try ended { (decoder: inout any IncrementalImageDecoding) in
                decoder.finish()
                return try decoder.finalImage(format: format)
            }!
        }

        /// Runs `body` on the decoder, names the codec in what it throws and ends on a result or an error.
        private mutating func ended(_ body: (inout any IncrementalImageDecoding) throws -> ImageContainer?) throws(ImageCodecError) -> ImageContainer? {
            do {
                let container = try body(&decoder)
                if container != nil { isEnded = true }
                return container
            } catch {
                isEnded = true
                throw ImageCodecError.wrapping(error, stage: .decoding, format: format, codec: codec.codecDescription)
            }
        }
    }

    /// Starts a decode of a complete file that arrives in pieces (``StreamingDecode``).
    ///
    /// - Parameter context: The decode's options; its ``ImageDecodingContext/data`` holds the
    ///   first piece, enough to sniff the format (the header too, for the limits to be checked
    ///   before the decoder sees a byte).
    /// - Throws: ``ImageCodecError``: `.noCodec` when no decoder accepts the data.
    public func streamingDecode(_ context: ImageDecodingContext) throws(ImageCodecError) -> StreamingDecode {
        try StreamingDecode(registry: self, context: context, rowsTo: nil)
    }
}
