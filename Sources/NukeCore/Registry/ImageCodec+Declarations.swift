/// A decode option a codec reads from ``ImageDecodingContext/userInfo``, declared in its
/// ``ImageCodec`` so that tools offer it without knowing the format (`nuke convert --option
/// page=2` sets NukeTIFF's page, `--option dpi=144` NukeSVG's resolution).
public struct ImageDecodingOption: Sendable, CustomStringConvertible {
    /// The name tools use (`"page"`).
    public var name: String
    /// The ``ImageDecodingContext/userInfo`` key the codec reads (`"nukecodecs/tiff-page"`).
    public var key: String
    /// What the option does and which values it takes, for help texts.
    public var summary: String
    /// The value for the key, from a tool's text; `nil` when the text is not a valid value.
    public var parse: @Sendable (String) -> (any Sendable)?

    /// Declares an option.
    ///
    /// - Parameters:
    ///   - name: The name tools use.
    ///   - key: The ``ImageDecodingContext/userInfo`` key.
    ///   - summary: What it does and which values it takes.
    ///   - parse: The value from a tool's text, or `nil` when the text is not a valid value.
    public init(name: String, key: String, summary: String, parse: @escaping @Sendable (String) -> (any Sendable)?) {
        self.name = name
        self.key = key
        self.summary = summary
        self.parse = parse
    }

    /// `name: summary`.
    public var description: String { "\(name): \(summary)" }
}

/// What a codec shows of one decode beyond the core's fields (an SVG's intrinsic size, a TIFF's
/// page and compression), from the container's `userInfo`: `nuke info` prints it without knowing
/// the format.
public struct ImageFormatDetails: Sendable {
    /// A heading (`"TIFF"`); its lowercase form names the details in JSON.
    public var name: String
    /// One line for people: `"page 2 of 3, LZW, RGB, 8 bits per sample, strips"`.
    public var summary: String
    /// The same for programs, in order; `nil` values are unknown.
    public var fields: [(name: String, value: (any Sendable)?)]

    /// Creates details.
    ///
    /// - Parameters:
    ///   - name: A heading; its lowercase form names the details in JSON.
    ///   - summary: One line for people.
    ///   - fields: The same for programs, in order.
    public init(name: String, summary: String, fields: [(name: String, value: (any Sendable)?)]) {
        self.name = name
        self.summary = summary
        self.fields = fields
    }
}

extension ImageCodec {
    /// The options every linked codec declares, for a tool's `--option NAME=VALUE` (worked out
    /// once: the linked codecs do not change).
    public static let linkedDecodingOptions: [ImageDecodingOption] = {
        var seen = Set<String>()
        return ImageCodecs.linked.flatMap(\.decodingOptions).filter { seen.insert($0.key).inserted }
    }()

    /// The details a linked codec of `type` gives of a decode's `userInfo`, if any.
    public static func details(of type: ImageType?, userInfo: [ImageContainer.UserInfoKey: any Sendable]) -> ImageFormatDetails? {
        ImageCodecs.linked.lazy.filter { $0.info.type == type }.compactMap { $0.describe?(userInfo) }.first
    }
}
