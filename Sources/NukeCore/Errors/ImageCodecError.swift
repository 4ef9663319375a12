/// The one error type NukeCore and its codec plugins throw.
///
/// It tells *what* went wrong (``code``), *when* (``stage``), for which ``format``, in which
/// ``codec``, and keeps the C library's own message. Incomplete input (a truncated download)
/// is told apart from corrupt input, so a caller can wait for more bytes or give up.
///
/// When the registry (`ImageDecoderRegistry.decode(_:)`) tries several decoders, the error it throws is the
/// first decoder's, with every attempt listed in ``attempts``.
public struct ImageCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. An extensible set of codes.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The data ends before the image does: more bytes may make it decodable.
        public static let incomplete = Code(rawValue: "incomplete")
        /// The data is malformed and no amount of additional bytes will fix it.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The data is valid but uses a feature the codec does not support.
        public static let unsupported = Code(rawValue: "unsupported")
        /// The image exceeds one of the ``ImageLimits``.
        public static let limitExceeded = Code(rawValue: "limit exceeded")
        /// No registered decoder or encoder handles the format.
        public static let noCodec = Code(rawValue: "no codec")
        /// The operation was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// Encoding failed.
        public static let encodingFailed = Code(rawValue: "encoding failed")
        /// The codec failed for a reason unrelated to the input (for example, out of memory).
        public static let internalFailure = Code(rawValue: "internal failure")
        /// A custom decoder threw an error of its own type, kept in
        /// ``ImageCodecError/underlyingError``.
        public static let decoderFailed = Code(rawValue: "decoder failed")
        /// An isolated decoder's helper process died (a signal, or an unexpected exit); the
        /// message names the signal. The host is unaffected.
        public static let crashed = Code(rawValue: "crashed")
        /// An isolated decode took longer than its wall-time limit; its helper was killed.
        public static let timedOut = Code(rawValue: "timed out")
        /// An isolated decoder tried something its sandbox forbids (a socket, a new process);
        /// its helper was ended.
        public static let sandboxViolation = Code(rawValue: "sandbox violation")

        /// `true` for the codes that end a registry's search for a decoder: a verdict on the
        /// data is final. Corrupt, incomplete, over a limit (the caller's decision about the
        /// file: no catch-all decoder may launder what the format's own decoder refused),
        /// cancelled, an isolated decoder's crash, time-out or violation, a custom decoder's own
        /// error: none is handed to the next candidate. Only a decoder that says the data is not
        /// for it lets the next one try: `.noCodec` (not its format) and `.unsupported` (a variant
        /// of the format it does not read, which another decoder may: a hardware JPEG decoder
        /// that cannot handle a file falls back to libjpeg).
        public var endsSearch: Bool {
            self != .noCodec && self != .unsupported
        }

        public var description: String { rawValue }
    }

    /// When the error happened. An extensible set of stages.
    public struct Stage: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Recognising the format from the first bytes.
        public static let sniffing = Stage(rawValue: "sniffing")
        /// Reading the header: size, format and other facts, before pixel memory is allocated.
        public static let header = Stage(rawValue: "header")
        /// Decoding pixels.
        public static let decoding = Stage(rawValue: "decoding")
        /// Encoding an image.
        public static let encoding = Stage(rawValue: "encoding")
        /// Choosing a codec in a registry (no codec, a limit, a policy).
        public static let registry = Stage(rawValue: "registry")

        public var description: String { rawValue }
    }

    /// What went wrong; the code decides whether a registry tries the next decoder.
    public var code: Code
    /// Where it went wrong: sniffing, header, decoding, encoding or the registry.
    public var stage: Stage
    /// The format being decoded or encoded, when known.
    public var format: ImageType?
    /// The codec, such as `"libjpeg-turbo 2.1.5"` or a custom decoder's name.
    public var codec: String?
    /// The reason, in the C library's own words where it gave any.
    public var message: String
    /// Every decoder tried, in order, when a registry fell through several of them.
    public var attempts: [ImageCodecError]
    /// The error a custom decoder threw, when it was not an ``ImageCodecError``
    /// (code ``Code-swift.struct/decoderFailed``).
    public var underlyingError: (any Error)?

    /// Creates an error; `message` says what happened in words a caller can log, the C library's own message where it has one.
    public init(
        _ code: Code,
        stage: Stage,
        format: ImageType? = nil,
        codec: String? = nil,
        message: String,
        attempts: [ImageCodecError] = [],
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.stage = stage
        self.format = format
        self.codec = codec
        self.message = message
        self.attempts = attempts
        self.underlyingError = underlyingError
    }

    /// Errors are equal when everything but the underlying error is, and the underlying errors
    /// (if any) describe themselves alike.
    public static func == (lhs: ImageCodecError, rhs: ImageCodecError) -> Bool {
        lhs.code == rhs.code && lhs.stage == rhs.stage && lhs.format == rhs.format && lhs.codec == rhs.codec
            && lhs.message == rhs.message && lhs.attempts == rhs.attempts
            && lhs.underlyingError.map { String(reflecting: $0) } == rhs.underlyingError.map { String(reflecting: $0) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(stage)
        hasher.combine(format)
        hasher.combine(codec)
        hasher.combine(message)
        hasher.combine(attempts)
    }

    /// `true` when the input ended too early: more data may make it decodable.
    public var isIncomplete: Bool { code == .incomplete }

    /// `true` when the input is malformed.
    public var isCorrupt: Bool { code == .corrupt }

    public var description: String {
        let subject = format?.name ?? "image"
        var text: String
        switch stage {
        case .registry: text = subject
        case .header: text = "\(subject) decoding failed at the header"
        case .decoding: text = "\(subject) decoding failed"
        case .encoding: text = "\(subject) encoding failed"
        default: text = "\(subject) \(stage) failed"
        }
        if let codec { text += " (\(codec))" }
        text += ": \(code): \(message)"
        if attempts.count > 1 {
            let tried = attempts.map { "\($0.codec ?? "decoder"): \($0.code): \($0.message)" }
            text += " [tried: " + tried.joined(separator: "; ") + "]"
        }
        return text
    }
}

extension ImageCodecError {
    /// Wraps any error a decoder threw into an ``ImageCodecError``, keeping one that already is
    /// (with `format` and `codec` filled in when it has none); a `CancellationError` becomes
    /// `.cancelled`, anything else `.decoderFailed` with the error kept as ``underlyingError``.
    public static func wrapping(_ error: any Error, stage: Stage, format: ImageType?, codec: String?) -> ImageCodecError {
        if var error = error as? ImageCodecError {
            if error.format == nil { error.format = format }
            if error.codec == nil { error.codec = codec }
            return error
        }
        if error is CancellationError {
            return ImageCodecError(.cancelled, stage: stage, format: format, codec: codec, message: "cancelled")
        }
        return ImageCodecError(.decoderFailed, stage: stage, format: format, codec: codec,
                               message: String(describing: error), underlyingError: error)
    }
}
