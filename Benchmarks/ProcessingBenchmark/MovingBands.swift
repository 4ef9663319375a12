import NukeCore

/// An animation made on the fly for the memory case: whole-canvas frames of diagonal bands in 64
/// colours that move from frame to frame, each drawn only when asked for.
final class MovingBands: AnimationFrameDecoding {
    let frameCount: Int
    let width: Int, height: Int

    init(frameCount: Int, width: Int, height: Int) {
        self.frameCount = frameCount
        self.width = width
        self.height = height
    }

    static func animation(frames: Int, width: Int, height: Int) -> ImageAnimation {
        let info = AnimationFrameInfo(x: 0, y: 0, width: width, height: height, duration: 0.04, disposal: .none, blending: .source)
        return ImageAnimation(canvasSize: ImageSize(width: width, height: height), loopCount: 0, frameInfos: Array(repeating: info, count: frames)) {
            MovingBands(frameCount: frames, width: width, height: height)
        }
    }

    func info(at index: Int) -> AnimationFrameInfo {
        AnimationFrameInfo(x: 0, y: 0, width: width, height: height, duration: 0.04, disposal: .none, blending: .source)
    }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            for y in 0..<height {
                for x in 0..<width {
                    let band = ((x + y + index * 7) / 16) & 63
                    let offset = (y * width + x) * 4
                    buffer[offset] = UInt8(band * 4); buffer[offset + 1] = UInt8(255 - band * 4)
                    buffer[offset + 2] = UInt8((band * 37) & 255); buffer[offset + 3] = 255
                }
            }
        }
    }

    func reset() throws(ImageCodecError) {}
}
