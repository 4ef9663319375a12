import Foundation
import NukeCore
import NukePixels
import Testing
@testable import NukeGIF

@Suite("ImageAnimation over damaged GIFs")
struct GIFAnimationRobustnessTests {
    /// A small deterministic generator (SplitMix64), so a failure reproduces.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Corrupts 1–4 bytes past the header of each animated fixture 150 times, decodes, and plays
    /// every frame, forwards and by seeking: an image or an ``ImageCodecError`` naming GIF,
    /// never a crash.
    @Test(.enabled(if: gifFixturesExist), arguments: GIFFixture.all.filter { $0.frames > 1 })
    func corruptedFramesPlayOrFail(_ fixture: GIFFixture) throws {
        let original = try GIFTestPaths.fixture(fixture.name)
        var generator = SplitMix(state: UInt64(original.count))
        var decoded = 0, failed = 0
        for _ in 0..<150 {
            var bytes = [UInt8](original)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 13..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do {
                // Small limits: a corrupted frame size must not make the test allocate much.
                let container = try ImageDecoders.GIF(limits: ImageLimits(maxPixelCount: 1 << 22, maxDecodedBytes: 64 << 20)).decode(Data(bytes))
                if let animation = container.animation {
                    let frames = try animation.makeIterator(memoryBudget: 64 << 20)
                    while let frame = try frames.next() {
                        #expect(frame.canvas.width == animation.canvasSize.width)
                    }
                    try frames.seek(to: animation.frameCount / 2)
                    _ = try frames.next()
                }
                decoded += 1
            } catch let error as ImageCodecError {
                #expect(error.format == .gif, "\(error)")
                failed += 1
            }
        }
        #expect(decoded + failed == 150)
    }
}
