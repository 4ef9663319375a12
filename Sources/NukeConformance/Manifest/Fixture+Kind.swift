extension Fixture {
    /// Whether a decoder must accept or reject a fixture.
    public enum Kind: String, Sendable, Hashable, Decodable {
        /// The file is a valid image: it must decode.
        case valid
        /// The file is truncated, malformed or over a limit: decoding must throw.
        case invalid
        /// Nothing is known (a file from a public corpus): it must decode or throw
        /// `ImageCodecError`, and never crash. Only ``ConformanceCheck/robustness``,
        /// ``ConformanceCheck/sniffing``, ``ConformanceCheck/progressive`` and
        /// ``ConformanceCheck/concurrency`` apply.
        case unknown
    }
}
