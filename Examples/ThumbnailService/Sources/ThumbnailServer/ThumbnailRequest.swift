import NukeCore
import NukeProcessing

/// What a thumbnail is to be: the box, how the image meets it, the format and the quality.
///
/// From a GET URL's processing segment — options separated by `,` (imgproxy puts them in path
/// segments; one segment here keeps the URL `/{signature}/{processing}/{source}`):
/// - `fit:W:H` — the whole image inside W × H (the default, `fit:256:256`); `s:N` is `fit:N:N`;
/// - `fill:W:H` — W × H exactly, the image covering it, centred and cropped;
/// - `g:ce|no|so|we|ea|sm` — with `fill`, the part kept: the centre (the default), the top
///   (north), bottom, left (west), right (east), or the most detailed part (smart: entropy, as
///   libvips' `interesting`), imgproxy's names;
/// - `a:1` — an animated upload stays animated in WebP or PNG (APNG), every frame resized;
///   otherwise (the default, and in JPEG or AVIF) the thumbnail is its first frame;
/// - `f:webp|jpeg|png|avif` — the format; without it, negotiated from `Accept`;
/// - `q:1…100` — the quality (lossy formats);
/// - `pj:0|1` — a progressive JPEG (default 0: baseline; both with optimal Huffman tables).
/// For example `fill:300:200,g:sm,q:75` or `s:128,f:jpeg`.
struct ThumbnailRequest: Sendable, Equatable {
    enum Mode: String, Sendable { case fit, fill }

    var mode: Mode = .fit
    var width = 256
    var height = 256
    /// What a fill keeps.
    var gravity: ImageProcessors.Crop.Gravity = .center
    /// Keep an animation animated where the format can.
    var keepsAnimation = false
    /// `nil`: negotiate from `Accept`.
    var format: ImageType?
    /// `nil`: the configured default.
    var quality: Int?
    /// A progressive JPEG.
    var progressiveJPEG = false

    /// imgproxy's gravity names.
    static let gravities: [String: ImageProcessors.Crop.Gravity] = [
        "ce": .center, "no": .top, "so": .bottom, "we": .left, "ea": .right, "sm": .entropy,
    ]

    static let sizes = 16...2048

    struct Invalid: Error, Equatable {
        var reason: String
    }

    init(mode: Mode = .fit, width: Int = 256, height: Int = 256, gravity: ImageProcessors.Crop.Gravity = .center, keepsAnimation: Bool = false,
         format: ImageType? = nil, quality: Int? = nil) {
        self.mode = mode
        self.width = width
        self.height = height
        self.gravity = gravity
        self.keepsAnimation = keepsAnimation
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
            case ("g", 2):
                guard let value = Self.gravities[parts[1]] else { throw Invalid(reason: "g must be one of ce, no, so, we, ea, sm") }
                gravity = value
            case ("a", 2):
                guard parts[1] == "0" || parts[1] == "1" else { throw Invalid(reason: "a must be 0 or 1") }
                keepsAnimation = parts[1] == "1"
            case ("q", 2):
                guard let value = Int(parts[1]), (1...100).contains(value) else { throw Invalid(reason: "q must be a whole number 1…100") }
                quality = value
            case ("pj", 2):
                guard parts[1] == "0" || parts[1] == "1" else { throw Invalid(reason: "pj must be 0 or 1") }
                progressiveJPEG = parts[1] == "1"
            default:
                throw Invalid(reason: "unknown option \"\(option)\" (known: fit:W:H, fill:W:H, s:N, g:GRAVITY, a:0|1, f:FORMAT, q:1…100, pj:0|1)")
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
