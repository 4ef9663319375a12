import NukeCore

extension Fixture {
    /// The error a manifest says an invalid fixture must produce: `"incomplete"`,
    /// `"corrupt"` or `"limit"` (or any `ImageCodecError.Code` raw value).
    public struct ExpectedError: RawRepresentable, Sendable, Hashable, Decodable, CustomStringConvertible {
        public var rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        /// The data ends too early: `ImageCodecError.Code.incomplete`.
        public static let incomplete = ExpectedError(rawValue: "incomplete")
        /// The data is malformed: `ImageCodecError.Code.corrupt`.
        public static let corrupt = ExpectedError(rawValue: "corrupt")
        /// The codec does not support a feature the file uses: `ImageCodecError.Code.unsupported`.
        public static let unsupported = ExpectedError(rawValue: "unsupported")
        /// The image exceeds the default limits: `ImageCodecError.Code.limitExceeded`.
        public static let limit = ExpectedError(rawValue: "limit")

        /// The error code a decoder must throw.
        public var code: ImageCodecError.Code {
            switch rawValue {
            case "limit", "limit_exceeded", "limitExceeded": .limitExceeded
            default: ImageCodecError.Code(rawValue: rawValue)
            }
        }

        public var description: String { code.rawValue }
    }
}
