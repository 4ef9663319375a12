import NukeCore

extension ImageProcessors {
    /// Turns an image by quarter turns, clockwise (one pass over the pixels, any format).
    public struct Rotate: ImageProcessing, Hashable, CustomStringConvertible {
        /// Clockwise quarter turns, 0…3.
        public let quarterTurns: Int

        /// Turns the image `degrees` clockwise: a multiple of 90, negative for counter-clockwise
        /// (anything else traps).
        public init(degrees: Int) {
            precondition(degrees % 90 == 0, "Rotate: \(degrees)° is not a multiple of 90°")
            quarterTurns = ((degrees / 90) % 4 + 4) % 4
        }

        public func process(_ bitmap: Bitmap) throws -> Bitmap {
            bitmap.oriented(orientation)
        }

        /// The EXIF orientation whose display is this turn of the stored pixels.
        var orientation: ImageOrientation {
            switch quarterTurns {
            case 1: .right
            case 2: .down
            case 3: .left
            default: .up
            }
        }

        public var identifier: String { "com.github.kean/nuke/rotate?degrees=\(quarterTurns * 90)" }

        public var description: String { "Rotate(degrees: \(quarterTurns * 90))" }
    }
}
