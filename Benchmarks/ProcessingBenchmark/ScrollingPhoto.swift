import NukeCore
import NukeProcessing

/// An animation made on the fly for the memory case: a window that scrolls two pixels a frame
/// across a photo-like image twice its width, each frame cut out only when asked for.
final class ScrollingPhoto: AnimationFrameDecoding {
    let frameCount: Int
    private let size: ImageSize
    private let photo: Bitmap

    init(frameCount: Int, size: ImageSize, photo: Bitmap) {
        self.frameCount = frameCount
        self.size = size
        self.photo = photo
    }

    static func animation(frames: Int, width: Int, height: Int) -> ImageAnimation {
        let size = ImageSize(width: width, height: height)
        let scenery = NukeProcessingBenchmark.photo(width: 2 * width, height: height).converted(to: .rgba8)
        return ImageAnimation(canvasSize: size, loopCount: 0, frameInfos: Array(repeating: info(size), count: frames)) {
            ScrollingPhoto(frameCount: frames, size: size, photo: scenery)
        }
    }

    private static func info(_ size: ImageSize) -> AnimationFrameInfo {
        AnimationFrameInfo(x: 0, y: 0, width: size.width, height: size.height, duration: 0.04, disposal: .none, blending: .source)
    }

    func info(at index: Int) -> AnimationFrameInfo { Self.info(size) }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        photo.cropped(to: ImageRect(x: (2 * index) % (photo.width - size.width), y: 0, width: size.width, height: size.height))
    }

    func reset() throws(ImageCodecError) {}
}
