/// One of the checks a ``ConformanceSuite`` runs.
public enum ConformanceCheck: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `ImageType(data)` recognises every fixture as the codec's format.
    case sniffing
    /// Valid fixtures decode to their references, with the manifest's metadata, both
    /// through the codec's decoder and through an `ImageDecoderRegistry`.
    case referenceDecode = "reference decode"
    /// Invalid fixtures throw `ImageCodecError` with the expected code.
    case invalidInput = "invalid input"
    /// Every prefix of a valid fixture, decoded as complete data, throws `.incomplete` or
    /// `.corrupt` or returns an image of the full size.
    case truncation
    /// Valid fixtures with a few random bytes replaced decode or throw `ImageCodecError`.
    case corruption
    /// Feeding a fixture to one decoder in chunks gives well-formed previews and the same
    /// final image as a one-shot decode.
    case progressive
    /// Decode, encode, decode again: the pixels survive within the tolerance.
    case roundTrip = "round trip"
    /// Limits one below the image's size make the decode throw `.limitExceeded`; limits that
    /// fit exactly do not.
    case limits
    /// Concurrent decodes on distinct decoder instances equal sequential ones.
    case concurrency
    /// A file either decodes or throws `ImageCodecError` (for files of unknown validity,
    /// such as a public corpus).
    case robustness
    /// Animated fixtures: frames decoded lazily equal the eager array, seeking equals playing in
    /// order, the first frame is the container's image, and the timing is sane.
    case animation
    /// A target a third of the image's size gives the core's planned size and the original size
    /// in `userInfo` (codecs that declare `scaledDecode`).
    case decodeToSize = "decode to size"
    /// A cancelled token ends the decode in `.cancelled`, in one go and fed in pieces.
    case cancellation
    /// A corrupt, truncated or over-the-limit file ends the decode with the codec's error: a
    /// catch-all decoder registered after it is not tried.
    case finalVerdicts = "final verdicts"
    /// The header hook (when the codec has one) declares at least the decoded size, and every
    /// prefix reads that same header or asks for more: the core's limits are checked on it.
    case header

    public var description: String { rawValue }
}
