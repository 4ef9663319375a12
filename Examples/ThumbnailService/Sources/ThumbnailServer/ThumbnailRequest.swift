import NukeCore

/// What a thumbnail is to be: the box, how the image meets it, the format and the quality.
///
/// From a GET URL's processing segment — options separated by `,` (imgproxy puts them in path
/// segments; one segment here keeps the URL `/{signature}/{processing}/{source}`):
/// - `fit:W:H` — the whole image inside W × H (the default, `fit:256:256`); `s:N` is `fit:N:N`;
/// - `fill:W:H` — W × H exactly, the image covering it, centred and cropped;
/// - `f:webp|jpeg|png|avif` — the format; without it, negotiated from `Accept`;
/// - `q:1…100` — the quality (lossy formats).
/// For example `fill:300:200,q:75` or `s:128,f:jpeg`.
struct ThumbnailRequest: Sendable, Equatable {
    enum Mode: String, Sendable { case fit, fill }

    var mode: Mode = .fit
    var width = 256
    var height = 256
    /// `nil`: negotiate from `Accept`.
    var format: ImageType?
    /// `nil`: the configured default.
    var quality: Int?

    static let sizes = 16...2048

    struct Invalid: Error, Equatable {
        var reason: String
    }

    init(mode: Mode = .fit, width: Int = 256, height: Int = 256, format: ImageType? = nil, quality: Int? = nil) {
        self.mode = mode
        self.width = width
        self.height = height
        self.format = format
        self.quality = quality
    }

    /// Parses a processing segment; every option at most once.
    init(processing: Substring) throws(Invalid) {
        var seen: Set<String> = []
        for option in processing.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = option.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let name = parts[0]
            let group = name == "s" || name == "fit" || name == "fill" ? "size" : name
            guard seen.insert(group).inserted else { throw Invalid(reason: "\(group) is given twice") }
            switch (name, parts.count) {
            case ("fit", 3), ("fill", 3):
                mode = name == "fit" ? .fit : .fill
                width = try Self.dimension(parts[1], name)
                height = try Self.dimension(parts[2], name)
            case ("s", 2):
                width = try Self.dimension(parts[1], "s")
                height = width
            case ("f", 2):
                guard let type = ServiceSettings.outputTypes[parts[1]] else {
                    throw Invalid(reason: "f must be one of avif, jpeg, png, webp")
                }
                format = type
            case ("q", 2):
                guard let value = Int(parts[1]), (1...100).contains(value) else { throw Invalid(reason: "q must be a whole number 1…100") }
                quality = value
            default:
                throw Invalid(reason: "unknown option \"\(option)\" (known: fit:W:H, fill:W:H, s:N, f:FORMAT, q:1…100)")
            }
        }
    }

    private static func dimension(_ text: String, _ option: String) throws(Invalid) -> Int {
        guard let value = Int(text), sizes.contains(value) else {
            throw Invalid(reason: "\(option): sizes are whole numbers \(sizes.lowerBound)…\(sizes.upperBound)")
        }
        return value
    }

    var box: ImageSize { ImageSize(width: width, height: height) }
}
