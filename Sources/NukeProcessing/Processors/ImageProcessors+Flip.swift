import NukeCore

extension ImageProcessors {
    /// Mirrors an image (one pass over the pixels, any format).
    public struct Flip: ImageProcessing, Hashable, CustomStringConvertible {
        /// The axis an image is mirrored across.
        public enum Direction: String, Sendable, Hashable, CaseIterable {
            /// Left and right swap (Pillow's `ImageOps.mirror`).
            case horizontal
            /// Top and bottom swap (Pillow's `ImageOps.flip`).
            case vertical
        }

        /// Which way the image is mirrored.
        public let direction: Direction

        /// Mirrors the image in `direction`.
        public init(_ direction: Direction) {
            self.direction = direction
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            bitmap.oriented(orientation)
        }

        /// The EXIF orientation whose display is this mirror image of the stored pixels.
        var orientation: ImageOrientation {
            direction == .horizontal ? .upMirrored : .downMirrored
        }

        public var identifier: String { "com.github.kean/nuke/flip?direction=\(direction.rawValue)" }

        public var description: String { "Flip(\(direction))" }
    }
}
