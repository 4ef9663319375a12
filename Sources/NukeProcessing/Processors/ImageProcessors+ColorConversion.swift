#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

extension ImageProcessors {
    /// Converts pixels to a colour (`ImageColorTarget`) through the program's colour
    /// manager (`ImageColorManagement`: link NukeColor), from the colour `source`
    /// describes (sRGB when it describes none): the output stage's step, for pixels that did not
    /// go through it, such as an animation's frames.
    public struct ColorConversion: ImageProcessing, Hashable, CustomStringConvertible {
        /// The colour the pixels are converted to.
        public let target: ImageColorTarget
        /// The colour the pixels are in: its ICC profile or `nclx` description.
        public let source: ColorInfo

        /// Converts pixels described by `source` to `target`.
        public init(to target: ImageColorTarget, from source: ColorInfo = ColorInfo()) {
            self.target = target
            self.source = source
        }

        /// - Throws: ``NukeCore/ImageCodecError`` `.unsupported` when no colour manager is linked,
        ///   or the manager's error.
        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            guard let manager = ImageColorManagement.current else {
                throw ImageCodecError.processing("converting colour to \(target) needs a colour manager: link NukeColor (Little CMS)")
            }
            var image = Image(bitmap: bitmap)
            image.colorInfo = source
            var container = ImageContainer(image: image)
            try manager.convert(&container, to: target)
            return container.image.bitmap
        }

        /// Stable across runs: profiles by their size and FNV-1a digest.
        public var identifier: String {
            func profile(_ data: Data) -> String {
                let digest = data.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
                return "icc:\(data.count):" + String(digest, radix: 16)
            }
            let to: String = switch target {
            case .sRGB: "srgb"
            case .profile(let data): profile(data)
            }
            let from = source.iccProfile.map(profile) ?? "none"
            let gamma = source.gamma.map { ",gamma=\($0)" } ?? ""
            let intent = source.sRGBIntent.map { ",intent=\($0)" } ?? ""
            return "nukecodecs/color?to=\(to),from=\(from)\(gamma)\(intent)"
        }

        public var description: String { "ColorConversion(to: \(target))" }
    }
}
