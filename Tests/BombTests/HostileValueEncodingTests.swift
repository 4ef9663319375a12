import Foundation
import NukeCore
import NukeGIF
import NukeJXL
import NukePNG
import NukeWebP
import Testing

/// Values no decoder makes but a compromised helper (or a caller's own code) could put in an
/// image: NaN and astronomically long frame durations, a rendering intent or gamma no format
/// holds. Every encoder either writes a file or throws; none traps (issue 40 found SIGILL in
/// GIF, WebP, APNG and PNG on these).
struct HostileValueEncodingTests {
    static let durations: [Double] = [.nan, .infinity, -.infinity, -1, 1e300, 65_536, 1e12]

    static func animation(duration: Double) -> Image {
        let frames = (0..<2).map { index in
            ImageFrame(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: UInt8(index * 100), count: 16)),
                       duration: duration)
        }
        return Image(frames: frames, loopCount: 1 << 40)
    }

    static let encoders: [(String, any ImageEncoding)] = [
        ("GIF", ImageEncoders.GIF()), ("WebP", ImageEncoders.WebP()), ("APNG", ImageEncoders.PNG()), ("JPEG XL", ImageEncoders.JXL()),
    ]

    @Test(arguments: durations)
    func durationsNeverTrap(_ duration: Double) {
        for (name, encoder) in Self.encoders {
            do {
                let data = try encoder.encode(Self.animation(duration: duration))
                #expect(!data.isEmpty, "\(name) with a duration of \(duration)")
            } catch {
                // A clear error is fine too; a trap is not.
                #expect(error is ImageCodecError, "\(name) with a duration of \(duration): \(error)")
            }
        }
    }

    @Test(arguments: [Int(1) << 32, -7, 4, Int.max])
    func intentsNeverTrap(_ intent: Int) throws {
        for gamma in [Double.nan, 1e300, -1, 0.45455] {
            let image = Image(bitmap: Bitmap(width: 2, height: 1, pixelFormat: .rgb8, bytes: [1, 2, 3, 4, 5, 6]),
                              colorInfo: ColorInfo(iccProfile: nil, gamma: gamma, sRGBIntent: intent))
            let data = try ImageEncoders.PNG().encode(image)
            #expect(!data.isEmpty)
        }
    }

    @Test func storableDurationsAreFiniteAndBounded() {
        for value in Self.durations + [0, 0.1, 65_535] {
            let stored = AnimationFrameInfo.storableDuration(value)
            #expect(stored.isFinite && stored >= 0 && stored <= AnimationFrameInfo.maximumStorableDuration, "\(value) → \(stored)")
        }
        #expect(AnimationFrameInfo.storableDuration(0.1) == 0.1)
    }
}
