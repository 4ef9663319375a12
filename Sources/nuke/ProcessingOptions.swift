import ArgumentParser
import NukeCore
import NukeProcessing

/// `nuke convert`'s processors (NukeProcessing), applied after the decode in a fixed order:
/// resize, crop, rotate, flip, blur, rounded corners or circle, flatten.
struct ProcessingOptions: ParsableArguments {
    @Option(help: "fit:WxH (inside the box) or fill:WxH (cover the box; add --crop to cut it to exactly WxH); WxH alone is fit. Decoded to size where the codec can reduce.")
    var resize: ResizeArgument?

    @Option(help: "With --resize fill: cut the overflow, keeping the center, top, bottom, left, right or entropy (the most detailed part, as libvips' interesting=entropy). Or a rectangle WxH+X+Y.")
    var crop: String?

    @Flag(help: "With --resize: let smaller images grow to the box (bicubic).")
    var upscale = false

    @Option(help: "Rotate clockwise by 90, 180 or 270 degrees (-90 for counter-clockwise).")
    var rotate: Int?

    @Option(help: "Mirror: h (left and right swap) or v (top and bottom swap).")
    var flip: String?

    @Option(help: "Gaussian blur of this standard deviation in pixels (as Pillow's GaussianBlur(radius)).")
    var blur: Double?

    @Option(help: "Round the corners to this radius in pixels (anti-aliased; the output has alpha).")
    var round: Double?

    @Flag(help: "Cut the largest centred square and draw it in a circle (anti-aliased; the output has alpha).")
    var circle = false

    @Option(help: "Composite onto this colour and drop alpha: #rrggbb, white or black.")
    var flatten: String?

    @Option(help: "The frame of an animation to write as a still image, from 0. Default: an animated output keeps the animation (every frame processed); a still output takes frame 0.")
    var frame: Int?

    /// The crop's gravity, when `--crop` names one.
    private var gravity: ImageProcessors.Crop.Gravity? {
        crop.flatMap { ImageProcessors.Crop.Gravity(rawValue: $0.lowercased() == "centre" ? "center" : $0.lowercased()) }
    }

    /// `WxH+X+Y`.
    private var rectangle: ImageRect? {
        guard let crop else { return nil }
        let parts = crop.lowercased().split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count == 3, let size = SizeArgument(String(parts[0]))?.size, let x = Int(parts[1]), let y = Int(parts[2]), x >= 0, y >= 0 else { return nil }
        return ImageRect(x: x, y: y, width: size.width, height: size.height)
    }

    func validate() throws {
        if crop != nil {
            if gravity == nil && rectangle == nil {
                throw ValidationError("--crop must be center, top, bottom, left, right, entropy or WxH+X+Y")
            }
            if gravity != nil && resize?.contentMode != .aspectFill {
                throw ValidationError("--crop \(crop ?? "") cuts a fill to its box: give --resize fill:WxH")
            }
        }
        if upscale && resize == nil { throw ValidationError("--upscale needs --resize") }
        if let rotate, rotate % 90 != 0 { throw ValidationError("--rotate must be a multiple of 90") }
        if let flip, !["h", "v", "horizontal", "vertical"].contains(flip.lowercased()) { throw ValidationError("--flip must be h or v") }
        if let blur, !(blur >= 0 && blur <= 1000) { throw ValidationError("--blur must be between 0 and 1000") }
        if let round, !(round >= 0 && round.isFinite) { throw ValidationError("--round must be 0 or more") }
        if let flatten, RGBColor(flatten) == nil { throw ValidationError("--flatten must be #rrggbb, white or black") }
        if let frame, frame < 0 { throw ValidationError("--frame counts from 0") }
    }

    /// The processors, in the order they run.
    var processors: [any ImageProcessing] {
        var processors: [any ImageProcessing] = []
        if let resize {
            let cropsCentre = gravity == .center
            processors.append(ImageProcessors.Resize(size: resize.size, contentMode: resize.contentMode, crop: cropsCentre, upscale: upscale))
            if let gravity, gravity != .center { processors.append(ImageProcessors.Crop(size: resize.size, gravity: gravity)) }
        }
        if let rectangle { processors.append(ImageProcessors.Crop(rect: rectangle)) }
        if let rotate, rotate % 360 != 0 { processors.append(ImageProcessors.Rotate(degrees: rotate)) }
        if let flip { processors.append(ImageProcessors.Flip(flip.lowercased().hasPrefix("h") ? .horizontal : .vertical)) }
        if let blur, blur > 0 { processors.append(ImageProcessors.GaussianBlur(radius: blur)) }
        if let round { processors.append(ImageProcessors.RoundedCorners(radius: round)) }
        if circle { processors.append(ImageProcessors.Circle()) }
        if let flatten, let color = RGBColor(flatten) { processors.append(ImageProcessors.Flatten(color: color)) }
        return processors
    }
}
