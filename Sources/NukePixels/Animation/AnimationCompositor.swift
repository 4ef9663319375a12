import NukeCore

/// Draws an animation's frames onto its canvas as browsers do.
///
/// The canvas starts fully transparent. For each frame, in order, ``draw(_:info:)``:
/// 1. disposes of the previous frame: `.background` clears its (clipped) rectangle to
///    transparent black, as browsers do (not to the GIF background colour); `.previous`
///    restores the rectangle to what it held before that frame was drawn;
/// 2. when this frame's disposal is `.previous`, saves what its rectangle holds now;
/// 3. draws the frame's pixels in its rectangle, clipped to the canvas: `.source` replaces
///    them, `.over` composites source-over with straight alpha
///    (`αo = αs + αd(1 − αs)`, `Co = (Cs·αs + Cd·αd(1 − αs)) / αo`, rounded).
///
/// It holds the canvas plus, for a frame disposed to previous, a copy of that frame's rectangle.
/// The canvas it returns shares its storage: nothing is copied unless the caller still holds
/// the previous canvas when the next frame is drawn (copy on write). A frame that replaces the
/// whole canvas (``replacesCanvas(_:)``) becomes the canvas, without a copy.
/// One compositor serves every format's plugin.
public struct AnimationCompositor: Sendable {
    /// The canvas size.
    public let width: Int
    /// The canvas height in pixels.
    public let height: Int
    /// `nil` while the canvas is all transparent and no storage was needed yet.
    private var canvas: Bitmap?
    /// The saved rectangle (clipped) of the last frame when its disposal is `.previous`.
    private var saved: [UInt8] = []
    /// The last frame drawn, whose disposal applies before the next one.
    private var pending: AnimationFrameInfo?

    /// Creates a compositor with a transparent `width × height` canvas.
    public init(width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "negative canvas size")
        self.width = width
        self.height = height
        self.canvas = nil
    }

    /// A new canvas of transparent black (new storage: the old one may still be the caller's).
    private static func transparentCanvas(width: Int, height: Int) -> Bitmap {
        Bitmap(width: width, height: height, pixelFormat: .rgba8, alphaMode: .straight) { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// Clears the canvas to transparent, as before the first frame. It lets go of the canvas's
    /// storage (new storage comes when a frame is drawn), so calling it before decoding a frame that
    /// replaces the whole canvas (``replacesCanvas(_:)``) keeps the old canvas and the new frame
    /// from being held together.
    public mutating func reset() {
        canvas = nil
        saved = []
        pending = nil
    }

    /// The canvas as it stands, `.rgba8` with straight alpha.
    public var canvasBitmap: Bitmap {
        canvas ?? Self.transparentCanvas(width: width, height: height)
    }

    /// `true` when `info`'s frame replaces the whole canvas: it covers the canvas exactly, with
    /// `.source` blending, and is not disposed to previous (nothing needs saving). Such a frame's
    /// bitmap becomes the canvas in ``draw(_:info:)``.
    public func replacesCanvas(_ info: AnimationFrameInfo) -> Bool {
        info.x == 0 && info.y == 0 && info.width == width && info.height == height
            && info.blending == .source && info.disposal != .previous
    }

    /// Gives the canvas storage before it is written (transparent until then).
    private mutating func ensureCanvas() {
        if canvas == nil { canvas = Self.transparentCanvas(width: width, height: height) }
    }

    /// The part of `info`'s rectangle inside the canvas, or `nil` when nothing is.
    private func clip(_ info: AnimationFrameInfo) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        let x0 = max(info.x, 0), y0 = max(info.y, 0)
        let x1 = min(info.x &+ info.width, width), y1 = min(info.y &+ info.height, height)
        return x0 < x1 && y0 < y1 ? (x0, y0, x1, y1) : nil
    }

    /// Draws one frame and returns the canvas.
    ///
    /// - Parameters:
    ///   - frame: The frame's own rectangle, `.rgba8` with straight alpha, `info.width ×
    ///     info.height` (misuse traps).
    ///   - info: Where and how to draw it.
    /// - Returns: The canvas after the frame, `.rgba8` with straight alpha.
    @discardableResult
    public mutating func draw(_ frame: Bitmap, info: AnimationFrameInfo) -> Bitmap {
        precondition(frame.pixelFormat == .rgba8, "frames are rgba8")
        precondition(frame.width == info.width && frame.height == info.height, "frame size differs from its info")
        if replacesCanvas(info), frame.bytesPerRow == width * 4, frame.alphaMode != .premultiplied {
            // Every pixel is replaced, so the previous disposal has nothing left to act on.
            canvas = frame
            saved = []
            pending = info
            return frame
        }
        dispose()
        let rect = clip(info)
        if info.disposal == .previous {
            saved = rect.map { copyRect($0) } ?? []
        }
        if let rect {
            blend(frame, info: info, rect: rect)
        }
        pending = info
        return canvasBitmap
    }

    /// Draws a frame that a plugin paints onto the canvas itself
    /// (`AnimationFrameDecoding.drawFrame(at:onto:)`): the previous frame's disposal and the
    /// saving for a frame disposed to previous happen as in ``draw(_:info:)``, then `paint`
    /// draws. When `paint` throws, a frame disposed to previous is undone; otherwise the canvas
    /// keeps what was drawn (drawing the same frame again gives the same canvas).
    ///
    /// - Returns: The canvas after the frame, `.rgba8` with straight alpha.
    @discardableResult
    public mutating func draw<E: Error>(info: AnimationFrameInfo, painting paint: (AnimationCanvas) throws(E) -> Void) throws(E) -> Bitmap {
        dispose()
        let rect = clip(info)
        if info.disposal == .previous {
            saved = rect.map { copyRect($0) } ?? []
        }
        let (canvasWidth, canvasHeight) = (width, height)
        do {
            ensureCanvas()
            try canvas!.withUnsafeMutableBytes { (bytes) throws(E) in
                try paint(AnimationCanvas(bytes: bytes, width: canvasWidth, height: canvasHeight))
            }
        } catch {
            if info.disposal == .previous, let rect { restoreSaved(rect) }
            throw error
        }
        pending = info
        return canvasBitmap
    }

    /// Applies the pending frame's disposal.
    private mutating func dispose() {
        guard let last = pending, let rect = clip(last) else { return }
        let rowBytes = (rect.x1 - rect.x0) * 4
        switch last.disposal {
        case .none:
            break
        case .background:
            guard canvas != nil else { break }   // still all transparent
            let canvasWidth = width
            canvas!.withUnsafeMutableBytes { c in
                for y in rect.y0..<rect.y1 {
                    (c.baseAddress! + (y * canvasWidth + rect.x0) * 4).initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes)
                }
            }
        case .previous:
            restoreSaved(rect)
        }
        pending = nil
    }

    /// Puts the saved copy back into `rect` and lets it go.
    private mutating func restoreSaved(_ rect: (x0: Int, y0: Int, x1: Int, y1: Int)) {
        let rowBytes = (rect.x1 - rect.x0) * 4
        guard saved.count == rowBytes * (rect.y1 - rect.y0) else { return }
        let canvasWidth = width
        ensureCanvas()
        canvas!.withUnsafeMutableBytes { c in
            saved.withUnsafeBufferPointer { s in
                for y in rect.y0..<rect.y1 {
                    let start = (y * canvasWidth + rect.x0) * 4
                    let from = (y - rect.y0) * rowBytes
                    (c.baseAddress! + start).copyMemory(from: s.baseAddress! + from, byteCount: rowBytes)
                }
            }
        }
        saved = []
    }

    private func copyRect(_ rect: (x0: Int, y0: Int, x1: Int, y1: Int)) -> [UInt8] {
        let rowBytes = (rect.x1 - rect.x0) * 4
        var out = [UInt8]()
        out.reserveCapacity(rowBytes * (rect.y1 - rect.y0))
        guard let canvas else { return [UInt8](repeating: 0, count: rowBytes * (rect.y1 - rect.y0)) }
        canvas.withUnsafeBytes { c in
            for y in rect.y0..<rect.y1 {
                let start = (y * width + rect.x0) * 4
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: c[start..<(start + rowBytes)]))
            }
        }
        return out
    }

    private mutating func blend(_ frame: Bitmap, info: AnimationFrameInfo, rect: (x0: Int, y0: Int, x1: Int, y1: Int)) {
        let canvasWidth = width
        let replace = info.blending == .source
        let stride = frame.bytesPerRow
        frame.withUnsafeBytes { src in
            ensureCanvas()
            canvas!.withUnsafeMutableBytes { dst in
                for y in rect.y0..<rect.y1 {
                    var s = (y - info.y) * stride + (rect.x0 - info.x) * 4
                    var d = (y * canvasWidth + rect.x0) * 4
                    if replace {
                        let count = (rect.x1 - rect.x0) * 4
                        (dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: count)
                        continue
                    }
                    for _ in rect.x0..<rect.x1 {
                        let sa = Int(src[s + 3])
                        if sa == 255 {
                            // Opaque (every pixel of a GIF that is not transparent): one word.
                            dst.storeBytes(of: src.loadUnaligned(fromByteOffset: s, as: UInt32.self), toByteOffset: d, as: UInt32.self)
                        } else if sa != 0 {
                            let da = Int(dst[d + 3])
                            // Alpha scaled by 255: αo·255 = αs·255 + αd(255 − αs).
                            let outA = sa * 255 + da * (255 - sa)
                            for c in 0..<3 {
                                let value = Int(src[s + c]) * sa * 255 + Int(dst[d + c]) * da * (255 - sa)
                                dst[d + c] = UInt8((value + outA / 2) / outA)
                            }
                            dst[d + 3] = UInt8((outA + 127) / 255)
                        }
                        s += 4
                        d += 4
                    }
                }
            }
        }
    }
}
