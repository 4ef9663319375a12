import NukeCore

extension ImageProcessors {
    /// Cuts out part of an image: a rectangle, or a size placed by a gravity (the centre by
    /// default, as Nuke's crop of a fill and libvips' `crop=centre`).
    public struct Crop: ImageProcessing, Hashable, CustomStringConvertible {
        /// Where a crop of a given size is placed.
        public enum Gravity: String, Sendable, Hashable, CaseIterable {
            /// Centred on both axes.
            case center
            /// Touching the top edge, centred horizontally.
            case top
            /// Touching the bottom edge, centred horizontally.
            case bottom
            /// Touching the left edge, centred vertically.
            case left
            /// Touching the right edge, centred vertically.
            case right
            /// The part with the most detail, as libvips' `interesting=entropy`: slices of
            /// least entropy (of an 8-bit luma histogram) are trimmed off the edges until the
            /// size is reached.
            case entropy
        }

        private enum Region: Hashable {
            case rect(ImageRect)
            case size(ImageSize, Gravity)
        }

        private let region: Region

        /// Cuts out `rect`; processing an image that does not contain it throws.
        public init(rect: ImageRect) {
            precondition(rect.width > 0 && rect.height > 0, "Crop: empty rectangle \(rect)")
            region = .rect(rect)
        }

        /// Cuts out `size` placed by `gravity`; a side longer than the image's keeps the image's.
        public init(size: ImageSize, gravity: Gravity = .center) {
            precondition(size.width > 0 && size.height > 0, "Crop: empty size \(size)")
            region = .size(size, gravity)
        }

        /// The rectangle cut out of `bitmap`; `nil` when a rectangle is not inside it.
        func rect(in bitmap: Bitmap) -> ImageRect? {
            let size = ImageSize(width: bitmap.width, height: bitmap.height)
            if case .size(let target, .entropy) = region {
                return bitmap.mostDetailedRect(width: min(target.width, size.width), height: min(target.height, size.height))
            }
            return placedRect(in: size)
        }

        /// The rectangle cut out of an image of `size` when its pixels do not place it: `nil` for
        /// the entropy gravity, or when a rectangle is not inside the image.
        func placedRect(in size: ImageSize) -> ImageRect? {
            switch region {
            case .rect(let rect):
                return rect.isInside(size) ? rect : nil
            case .size(let target, let gravity):
                let w = min(target.width, size.width), h = min(target.height, size.height)
                let (cx, cy) = ((size.width - w) / 2, (size.height - h) / 2)
                switch gravity {
                case .center: return ImageRect(x: cx, y: cy, width: w, height: h)
                case .top: return ImageRect(x: cx, y: 0, width: w, height: h)
                case .bottom: return ImageRect(x: cx, y: size.height - h, width: w, height: h)
                case .left: return ImageRect(x: 0, y: cy, width: w, height: h)
                case .right: return ImageRect(x: size.width - w, y: cy, width: w, height: h)
                case .entropy: return nil
                }
            }
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            guard bitmap.width > 0, bitmap.height > 0 else { return bitmap }
            guard let rect = rect(in: bitmap) else {
                throw ImageCodecError.processing("crop \(region) is not inside the \(bitmap.width)×\(bitmap.height) image")
            }
            return bitmap.cropped(to: rect)
        }

        public var identifier: String {
            switch region {
            case .rect(let r): "com.github.kean/nuke/crop?rect=\(r.x),\(r.y),\(r.width),\(r.height)"
            case .size(let s, let gravity): "com.github.kean/nuke/crop?s=\(s.width)x\(s.height),gravity=\(gravity.rawValue)"
            }
        }

        public var description: String {
            switch region {
            case .rect(let r): "Crop(rect: \(r))"
            case .size(let s, let gravity): "Crop(size: \(s), gravity: \(gravity))"
            }
        }
    }
}
