import NukeCore

/// What a processor does to an image of a given size when all it does is move pixels: cut out a
/// rectangle, or turn and flip it.
enum PixelMove {
    /// The pixels of the rectangle, in the image's coordinates.
    case crop(ImageRect)
    /// The image as displayed with the orientation (a quarter turn is `.right`).
    case orient(ImageOrientation)
}

/// A processor that, on an image of some sizes, only moves pixels. The decode plan runs a run of
/// such processors at the start, with the image's orientation, as one copy of the pixels kept
/// (``Bitmap/oriented(_:cropping:)``), before the colour is converted.
protocol PixelMoving: ImageProcessing {
    /// The move this processor makes on an image of `size`; `nil` when it needs the pixels (a
    /// resample, a crop placed by its content) or would throw.
    func pixelMove(for size: ImageSize) -> PixelMove?
}

/// A processor whose output pixel depends only on the input pixel at the same place (a colour
/// conversion, a flatten): it gives the same output after pixels are moved, so the plan runs it
/// after the moves that follow it.
protocol PerPixelProcessing: ImageProcessing {}

/// Leading pixel moves composed with an orientation: the image is the part ``rect`` of the
/// stored pixels displayed with ``orientation``.
struct PixelMoves {
    /// The orientation the stored pixels are displayed with.
    private(set) var orientation: ImageOrientation
    /// The part of the displayed image kept.
    private(set) var rect: ImageRect
    /// The stored image's size.
    let storedSize: ImageSize

    /// The stored pixels of a `storedSize` image displayed with `orientation`, whole.
    init(storedSize: ImageSize, orientation: ImageOrientation) {
        self.storedSize = storedSize
        self.orientation = orientation
        let size = Self.displayedSize(storedSize, orientation)
        rect = ImageRect(x: 0, y: 0, width: size.width, height: size.height)
    }

    /// The size of the image the moves so far make.
    var size: ImageSize { rect.size }

    /// Adds a move made on the image so far.
    mutating func append(_ move: PixelMove) {
        switch move {
        case .crop(let crop):
            rect = ImageRect(x: rect.x + crop.x, y: rect.y + crop.y, width: crop.width, height: crop.height)
        case .orient(let turn):
            // Turning the cut-out part is cutting out the turned part of the whole image turned:
            // the corner of `rect` the turn starts from, found in the whole image turned.
            let whole = Self.displayedSize(storedSize, orientation)
            let (sx, sy) = turn.steps
            let inPart = turn.origin(width: rect.width, height: rect.height)
            let inWhole = turn.origin(width: whole.width, height: whole.height)
            let offset = (rect.x + inPart.0 - inWhole.0, rect.y + inPart.1 - inWhole.1)
            // The steps are orthogonal: their transpose undoes them.
            let x = sx.0 * offset.0 + sx.1 * offset.1, y = sy.0 * offset.0 + sy.1 * offset.1
            let size = turn.swapsDimensions ? ImageSize(width: rect.height, height: rect.width) : rect.size
            rect = ImageRect(x: x, y: y, width: size.width, height: size.height)
            orientation = Self.composed(orientation, then: turn)
        }
    }

    /// The image the moves make from `stored` (of ``storedSize``), in one pass.
    func apply(to stored: Bitmap) -> Bitmap {
        stored.oriented(orientation, cropping: rect)
    }

    /// Folds the leading processors that only move pixels into moves from `stored` displayed
    /// with `orientation`, stepping over those that work pixel by pixel.
    ///
    /// - Returns: The moves, and the processors left to run on their result: the per-pixel ones
    ///   stepped over, in their order, then the rest.
    static func fold(storedSize: ImageSize, orientation: ImageOrientation,
                     processors: [any ImageProcessing]) -> (moves: PixelMoves, rest: [any ImageProcessing]) {
        var moves = PixelMoves(storedSize: storedSize, orientation: orientation)
        var perPixel: [any ImageProcessing] = []
        let all = ImageProcessors.Composition(processors).processors
        var index = all.startIndex
        while index < all.endIndex {
            let processor = all[index]
            if let moving = processor as? any PixelMoving {
                guard let move = moving.pixelMove(for: moves.size) else { break }
                moves.append(move)
            } else if processor is any PerPixelProcessing {
                perPixel.append(processor)
            } else {
                break
            }
            index += 1
        }
        return (moves, perPixel + all[index...])
    }

    /// The orientation that displays stored pixels as `first` and then `second` do.
    static func composed(_ first: ImageOrientation, then second: ImageOrientation) -> ImageOrientation {
        // The map from displayed to stored coordinates is `first`'s steps times `second`'s.
        let (ax, ay) = first.steps, (bx, by) = second.steps
        func times(_ v: (Int, Int)) -> (Int, Int) {
            (ax.0 * v.0 + ay.0 * v.1, ax.1 * v.0 + ay.1 * v.1)
        }
        let (x, y) = (times(bx), times(by))
        return ImageOrientation.allCases.first { $0.steps.x == x && $0.steps.y == y }!
    }

    private static func displayedSize(_ size: ImageSize, _ orientation: ImageOrientation) -> ImageSize {
        orientation.swapsDimensions ? ImageSize(width: size.height, height: size.width) : size
    }
}

extension ImageProcessors.Resize: PixelMoving {
    /// Already at its scaled size (a decode planned for it): the crop to the box, or nothing.
    func pixelMove(for size: ImageSize) -> PixelMove? {
        guard size.width > 0, size.height > 0, scaledSize(for: size) == size else { return nil }
        return .crop(croppedRect(in: size))
    }
}

extension ImageProcessors.Crop: PixelMoving {
    func pixelMove(for size: ImageSize) -> PixelMove? {
        guard size.width > 0, size.height > 0, let rect = placedRect(in: size) else { return nil }
        return .crop(rect)
    }
}

extension ImageProcessors.Rotate: PixelMoving {
    func pixelMove(for size: ImageSize) -> PixelMove? {
        .orient(orientation)
    }
}

extension ImageProcessors.Flip: PixelMoving {
    func pixelMove(for size: ImageSize) -> PixelMove? {
        .orient(orientation)
    }
}

extension ImageProcessors.ColorConversion: PerPixelProcessing {}
extension ImageProcessors.Flatten: PerPixelProcessing {}
