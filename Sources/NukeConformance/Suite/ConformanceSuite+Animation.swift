import Foundation
import NukeCore
import NukePixels

extension ConformanceSuite {
    /// Checks an animated fixture's lazy frames against the eager ones.
    ///
    /// The container's `ImageAnimation` must give, through its iterator, exactly the
    /// frames of `ImageAnimation.allFrames(limits:)` (as many as `ImageAnimation.frameCount`),
    /// `ImageAnimation.frame(at:)` must equal sequential play for the first, middle and
    /// last frames (a seek replays from the nearest independent frame), the first frame must be the
    /// container's image, and no duration may be negative or shown shorter than stored. Still
    /// images are skipped.
    public func checkAnimation(_ fixture: Fixture) -> ConformanceResult {
        var result = start(.animation, fixture)
        guard fixture.kind == .valid else {
            result.skipped.append("\(fixture.file): not a valid fixture")
            return result
        }
        guard let data = load(fixture, into: &result),
              let container = expectImage(decodeOnce(data, limits: .unlimited), fixture, "decode", &result) else { return result }
        guard let animation = container.animation else {
            result.skipped.append("\(fixture.file): not animated")
            return result
        }
        result.caseCount += 1
        do {
            let eager = try animation.allFrames(limits: .unlimited)
            if eager.count != animation.frameCount {
                result.fail(fixture, "allFrames gave \(eager.count) frames, frameCount says \(animation.frameCount)")
            }
            let iterator = try animation.makeIterator()
            var index = 0
            while let frame = try iterator.next() {
                if index < eager.count, frame.canvas != eager[index].bitmap {
                    result.fail(fixture, "lazy frame \(index) differs from the eager one")
                }
                if frame.info.duration < 0 || frame.info.browserDuration < frame.info.duration {
                    result.fail(fixture, "frame \(index): duration \(frame.info.duration), browser duration \(frame.info.browserDuration)")
                }
                index += 1
            }
            if index != eager.count {
                result.fail(fixture, "the iterator gave \(index) frames, allFrames \(eager.count)")
            }
            if let first = eager.first, container.image.bitmap != first.bitmap {
                result.fail(fixture, "the container's image is not the first composited frame")
            }
            for seek in Set([0, eager.count / 2, eager.count - 1]) where seek >= 0 && seek < eager.count {
                if try animation.frame(at: seek).canvas != eager[seek].bitmap {
                    result.fail(fixture, "frame(at: \(seek)) differs from sequential play")
                }
            }
        } catch {
            result.fail(fixture, "decoding the frames failed: \(error)")
        }
        return result
    }
}
