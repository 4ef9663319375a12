import Foundation
import NukeCore
import NukePixels
import Testing

@Suite("AnimationCompositor")
struct AnimationCompositorTests {
    /// A `width × height` frame of one RGBA colour.
    static func frame(_ width: Int, _ height: Int, _ rgba: [UInt8]) -> Bitmap {
        Bitmap(width: width, height: height, pixelFormat: .rgba8, bytes: Array([[UInt8]](repeating: rgba, count: width * height).joined()))
    }

    static func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        (0..<4).map { UInt8(bitmap.sample(x: x, y: y, channel: $0)) }
    }

    static let red: [UInt8] = [255, 0, 0, 255]
    static let green: [UInt8] = [0, 255, 0, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]

    @Test("disposal none keeps the frame; background clears its rectangle to transparent")
    func disposeBackground() {
        var compositor = AnimationCompositor(width: 4, height: 4)
        compositor.draw(Self.frame(4, 4, Self.red), info: AnimationFrameInfo(x: 0, y: 0, width: 4, height: 4, duration: 0.1, disposal: .none))
        compositor.draw(Self.frame(2, 2, Self.green), info: AnimationFrameInfo(x: 1, y: 1, width: 2, height: 2, duration: 0.1, disposal: .background))
        let canvas = compositor.draw(Self.frame(1, 1, Self.clear), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0.1))
        #expect(Self.pixel(canvas, 0, 0) == Self.red)
        #expect(Self.pixel(canvas, 1, 1) == Self.clear)
        #expect(Self.pixel(canvas, 2, 2) == Self.clear)
        #expect(Self.pixel(canvas, 3, 3) == Self.red)
    }

    @Test("disposal previous restores the rectangle as it was before the frame")
    func disposePrevious() {
        var compositor = AnimationCompositor(width: 3, height: 1)
        compositor.draw(Self.frame(2, 1, Self.red), info: AnimationFrameInfo(x: 0, y: 0, width: 2, height: 1, duration: 0))
        let during = compositor.draw(Self.frame(2, 1, Self.green), info: AnimationFrameInfo(x: 1, y: 0, width: 2, height: 1, duration: 0, disposal: .previous))
        #expect(Self.pixel(during, 1, 0) == Self.green)
        let after = compositor.draw(Self.frame(1, 1, Self.clear), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0))
        #expect(Self.pixel(after, 0, 0) == Self.red)
        #expect(Self.pixel(after, 1, 0) == Self.red)
        #expect(Self.pixel(after, 2, 0) == Self.clear)
        // The canvas returned earlier shares storage with the compositor until it draws again:
        // drawing copied it first, so the caller's canvas still shows the frame it was returned for.
        #expect(Self.pixel(during, 1, 0) == Self.green)
    }

    @Test("a frame that replaces the whole canvas becomes it, and drawing on stays off the caller's frame")
    func replacingFrameBecomesTheCanvas() {
        var compositor = AnimationCompositor(width: 3, height: 2)
        compositor.draw(Self.frame(1, 1, Self.green), info: AnimationFrameInfo(x: 2, y: 1, width: 1, height: 1, duration: 0))
        let whole = AnimationFrameInfo(x: 0, y: 0, width: 3, height: 2, duration: 0, disposal: .background, blending: .source)
        #expect(compositor.replacesCanvas(whole))
        #expect(!compositor.replacesCanvas(AnimationFrameInfo(x: 0, y: 0, width: 3, height: 2, duration: 0, blending: .over)))
        #expect(!compositor.replacesCanvas(AnimationFrameInfo(x: 0, y: 0, width: 3, height: 2, duration: 0, disposal: .previous, blending: .source)))
        let red = Self.frame(3, 2, Self.red)
        #expect(compositor.draw(red, info: whole) == red)
        let after = compositor.draw(Self.frame(1, 1, Self.green), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0))
        // The red frame was disposed to background, then green drawn at 0,0.
        #expect(Self.pixel(after, 0, 0) == Self.green)
        #expect(Self.pixel(after, 2, 1) == Self.clear)
        #expect(red == Self.frame(3, 2, Self.red))
        compositor.reset()
        #expect(compositor.canvasBitmap == Self.frame(3, 2, Self.clear))
    }

    @Test("source-over with straight alpha; source replaces, alpha included")
    func blending() {
        var compositor = AnimationCompositor(width: 2, height: 1)
        compositor.draw(Self.frame(2, 1, Self.red), info: AnimationFrameInfo(x: 0, y: 0, width: 2, height: 1, duration: 0))
        let over = compositor.draw(Self.frame(1, 1, [0, 0, 255, 128]), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0, blending: .over))
        // 50 % blue over opaque red: (127, 0, 128), opaque.
        #expect(Self.pixel(over, 0, 0) == [127, 0, 128, 255])
        let source = compositor.draw(Self.frame(1, 1, [0, 0, 255, 128]), info: AnimationFrameInfo(x: 1, y: 0, width: 1, height: 1, duration: 0, blending: .source))
        #expect(Self.pixel(source, 1, 0) == [0, 0, 255, 128])
        // Over a transparent canvas, straight colour is kept.
        var empty = AnimationCompositor(width: 1, height: 1)
        let onClear = empty.draw(Self.frame(1, 1, [10, 20, 30, 100]), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0))
        #expect(Self.pixel(onClear, 0, 0) == [10, 20, 30, 100])
    }

    /// Partly transparent over partly transparent, as the PNG specification's alpha compositing
    /// (and the APNG `APNG_BLEND_OP_OVER`) defines it: αo = αs + αd(1 − αs),
    /// Co = (Cs·αs + Cd·αd(1 − αs)) / αo. 50 % blue over 50 % red: α 0.752, red 84.8, blue 170.2.
    @Test func partialAlphaOverPartialAlpha() {
        var compositor = AnimationCompositor(width: 1, height: 1)
        compositor.draw(Self.frame(1, 1, [255, 0, 0, 128]), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0, blending: .source))
        let over = compositor.draw(Self.frame(1, 1, [0, 0, 255, 128]), info: AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: 0, blending: .over))
        let pixel = Self.pixel(over, 0, 0)
        for (value, expected) in zip(pixel, [85, 0, 170, 192]) {
            #expect(abs(Int(value) - expected) <= 1, "\(pixel)")
        }
    }

    @Test("frames partly or wholly outside the canvas are clipped")
    func clipping() {
        var compositor = AnimationCompositor(width: 3, height: 3)
        let partly = compositor.draw(Self.frame(3, 3, Self.green), info: AnimationFrameInfo(x: 2, y: -1, width: 3, height: 3, duration: 0, disposal: .background))
        #expect(Self.pixel(partly, 2, 0) == Self.green)
        #expect(Self.pixel(partly, 2, 1) == Self.green)
        #expect(Self.pixel(partly, 2, 2) == Self.clear)
        #expect(Self.pixel(partly, 1, 0) == Self.clear)
        let outside = compositor.draw(Self.frame(2, 2, Self.red), info: AnimationFrameInfo(x: 10, y: 10, width: 2, height: 2, duration: 0, disposal: .previous))
        #expect(outside.packedBytes.allSatisfy { $0 == 0 })
    }

    @Test("browserDuration: 10 ms or less shows as 100 ms", arguments: [(0.0, 0.1), (0.01, 0.1), (0.02, 0.02), (1.5, 1.5)])
    func browserDuration(stored: Double, shown: Double) {
        #expect(AnimationFrameInfo(x: 0, y: 0, width: 1, height: 1, duration: stored).browserDuration == shown)
    }

    @Test("independence: first frame, after a full-canvas background disposal, or an opaque full-canvas source frame")
    func independence() {
        let full = AnimationFrameInfo(x: 0, y: 0, width: 4, height: 4, duration: 0)
        var clearing = full; clearing.disposal = .background
        var opaque = full; opaque.blending = .source
        var opaquePrevious = opaque; opaquePrevious.disposal = .previous
        let small = AnimationFrameInfo(x: 1, y: 1, width: 2, height: 2, duration: 0, blending: .source)
        let infos = [full, clearing, full, opaque, small, opaquePrevious, full]
        #expect(ImageAnimation.independence(of: infos, canvasWidth: 4, canvasHeight: 4) == [true, false, true, true, false, false, false])
    }
}

@Suite("ImageAnimation")
struct ImageAnimationTests {
    /// Frames from memory: frame i is a `(i % 3 + 1)`-pixel square of colour i at (i, i % 2).
    final class SyntheticFrames: AnimationFrameDecoding {
        let infos: [AnimationFrameInfo]
        private(set) var decoded: [Int] = []
        private var next = 0
        init(infos: [AnimationFrameInfo]) { self.infos = infos }
        var frameCount: Int { infos.count }
        func info(at index: Int) -> AnimationFrameInfo { infos[index] }
        func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
            decoded.append(index)
            let info = infos[index]
            let alpha: UInt8 = index % 2 == 0 ? 255 : 100
            return AnimationCompositorTests.frame(info.width, info.height, [UInt8(index * 20), UInt8(255 - index * 20), 50, alpha])
        }
        func reset() throws(ImageCodecError) { next = 0 }
    }

    static let infos: [AnimationFrameInfo] = (0..<10).map { i in
        let disposals: [AnimationFrameInfo.Disposal] = [.none, .previous, .background]
        let covers = i % 4 == 2
        return AnimationFrameInfo(
            x: covers ? 0 : i % 5, y: covers ? 0 : i % 2, width: covers ? 6 : i % 3 + 1, height: covers ? 4 : i % 3 + 1,
            duration: Double(i) / 100, disposal: disposals[i % 3], blending: i % 2 == 0 ? .source : .over
        )
    }

    static func animation() -> ImageAnimation {
        ImageAnimation(canvasSize: ImageSize(width: 6, height: 4), loopCount: 0, frameInfos: infos) { SyntheticFrames(infos: infos) }
    }

    @Test("seeking to any frame equals playing from the start")
    func seekEqualsSequential() throws {
        let animation = Self.animation()
        #expect(animation.frameInfos.contains { $0.isIndependent && $0 != animation.frameInfos[0] })
        let iterator = try animation.makeIterator()
        var sequential: [Bitmap] = []
        while let frame = try iterator.next() { sequential.append(frame.canvas) }
        #expect(sequential.count == 10)
        for index in [9, 0, 5, 3, 7, 2, 8] {
            try iterator.seek(to: index)
            #expect(try iterator.next()?.canvas == sequential[index], "seek to \(index)")
            #expect(try animation.frame(at: index).canvas == sequential[index])
        }
        #expect(try animation.allFrames().map(\.bitmap) == sequential)
    }

    @Test("the memory budget covers a canvas, a saved copy and one frame")
    func memoryBudget() throws {
        let animation = Self.animation()
        let needed = try #require(animation.iteratorBytes)
        #expect(needed == 6 * 4 * 4 * 2 + 6 * 4 * 4)
        #expect(throws: ImageCodecError.self) { try animation.makeIterator(memoryBudget: needed - 1) }
        _ = try animation.makeIterator(memoryBudget: needed)
    }
}
