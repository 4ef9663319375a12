import NukeCore
import NukePixels

extension ImageProcessors {
    /// Scales an image to a size, keeping its aspect ratio, as Nuke's `Resize`.
    ///
    /// - `.aspectFill` (the default): the image covers the box; with `crop`, the overflow is cut
    ///   off around the centre, so the output is exactly the box (Pillow's `ImageOps.fit`, sharp's
    ///   and libvips' `cover`).
    /// - `.aspectFit`: the image fits inside the box.
    ///
    /// Upscaling is off by default: an image already within the box is left at its size (and,
    /// with `crop`, cut to the box where it is larger). Shrinking uses the same algorithm and
    /// rounding as a decode to size, so when a resize is the first processor the decode reduces
    /// natively to the fill or fit size (``decodeTarget(for:)``) and the resize only crops.
    public struct Resize: ImageProcessing, Hashable, CustomStringConvertible {
        /// The box, in pixels; a side of `nil` is unbounded (``init(width:upscale:)``).
        public let width: Int?
        /// The box's height in pixels, `nil` when unbounded.
        public let height: Int?
        /// How the image covers the box.
        public let contentMode: ImageProcessingOptions.ContentMode
        /// With `.aspectFill`, cut the image to the box around its centre.
        public let crop: Bool
        /// Let the image grow to the box.
        public let upscale: Bool

        /// Creates a resize to `size` pixels (each side at least 1, else a trap).
        ///
        /// - Parameters:
        ///   - size: The box, in pixels.
        ///   - contentMode: `.aspectFill` (default) covers the box, `.aspectFit` fits inside it.
        ///   - crop: With `.aspectFill`, cut the image to exactly `size` around its centre.
        ///   - upscale: Let smaller images grow (default `false`).
        public init(size: ImageSize, contentMode: ImageProcessingOptions.ContentMode = .aspectFill, crop: Bool = false, upscale: Bool = false) {
            self.init(width: size.width, height: size.height, contentMode: contentMode, crop: crop, upscale: upscale)
        }

        /// Creates a resize to `width` × `height` in `unit`s, as Nuke's `Resize(size:unit:...)`: with
        /// `.points(scale:)` each side is `scale` times as many pixels (rounded, at least 1).
        public init(width: Double, height: Double, unit: ImageProcessingOptions.Unit,
                    contentMode: ImageProcessingOptions.ContentMode = .aspectFill, crop: Bool = false, upscale: Bool = false) {
            self.init(width: unit.wholePixels(width), height: unit.wholePixels(height), contentMode: contentMode, crop: crop, upscale: upscale)
        }

        /// Scales the image to `width` pixels wide, its height following the aspect ratio.
        public init(width: Int, upscale: Bool = false) {
            self.init(width: width, height: nil, contentMode: .aspectFit, crop: false, upscale: upscale)
        }

        /// Scales the image to `height` pixels high, its width following the aspect ratio.
        public init(height: Int, upscale: Bool = false) {
            self.init(width: nil, height: height, contentMode: .aspectFit, crop: false, upscale: upscale)
        }

        private init(width: Int?, height: Int?, contentMode: ImageProcessingOptions.ContentMode, crop: Bool, upscale: Bool) {
            precondition((width ?? 1) > 0 && (height ?? 1) > 0, "Resize: each side is at least 1 pixel")
            self.width = width
            self.height = height
            self.contentMode = contentMode
            self.crop = crop
            self.upscale = upscale
        }

        /// The box with unbounded sides large enough never to constrain.
        private var box: ImageSize {
            ImageSize(width: width ?? Int(Int32.max), height: height ?? Int(Int32.max))
        }

        /// The size the image is scaled to, before any crop.
        public func scaledSize(for size: ImageSize) -> ImageSize {
            let shrunk = size.fitted(to: box, contentMode: contentMode)
            guard upscale, shrunk == size else { return shrunk }
            let sx = Double(box.width) / Double(size.width), sy = Double(box.height) / Double(size.height)
            let scale = contentMode == .aspectFit ? min(sx, sy) : max(sx, sy)
            guard scale > 1 else { return size }
            func side(_ length: Int, _ target: Int, _ sideScale: Double) -> Int {
                sideScale == scale ? target : max(1, Int((Double(length) * scale).rounded()))
            }
            return ImageSize(width: side(size.width, box.width, sx), height: side(size.height, box.height, sy))
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            guard bitmap.width > 0, bitmap.height > 0 else { return bitmap }
            let size = ImageSize(width: bitmap.width, height: bitmap.height)
            let output = bitmap.scaled(to: scaledSize(for: size))
            return output.cropped(to: croppedRect(in: ImageSize(width: output.width, height: output.height)))
        }

        /// The part of the image scaled to `size` that is kept: with `crop` and `.aspectFill`, the
        /// box around the centre; otherwise all of it.
        func croppedRect(in size: ImageSize) -> ImageRect {
            guard crop, contentMode == .aspectFill else { return ImageRect(x: 0, y: 0, width: size.width, height: size.height) }
            let w = min(size.width, box.width), h = min(size.height, box.height)
            return ImageRect(x: (size.width - w) / 2, y: (size.height - h) / 2, width: w, height: h)
        }

        /// The box and content mode: a fill decodes to cover the box, a fit to fit inside it.
        public func decodeTarget(for orientedSize: ImageSize?) -> ImageProcessingDecodeTarget? {
            ImageProcessingDecodeTarget(size: box, contentMode: contentMode)
        }

        public var identifier: String {
            var id = "com.github.kean/nuke/resize?s="
            id += width.map(String.init) ?? "auto"
            id += "x"
            id += height.map(String.init) ?? "auto"
            id += contentMode == .aspectFill ? ",cm=aspectFill" : ",cm=aspectFit"
            id += crop ? ",crop=true" : ",crop=false"
            id += upscale ? ",upscale=true" : ",upscale=false"
            return id
        }

        public var description: String {
            "Resize(size: \(width.map(String.init) ?? "auto")×\(height.map(String.init) ?? "auto") pixels, contentMode: \(contentMode), crop: \(crop), upscale: \(upscale))"
        }
    }
}
