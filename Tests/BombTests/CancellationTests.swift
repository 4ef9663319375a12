import Foundation
import NukeCore
import NukeGIF
import NukeHEIF
import NukeJPEG
import NukePNG
import NukeWebP
import Testing

/// A decode cancelled while it runs stops with `.cancelled`, whether the caller's token or the
/// task is cancelled, in every plugin: between rows, scans, 64 KiB of WebP input, GIF row groups,
/// HEIF's decode and its rows.
///
/// Each image is made here by our encoders, large enough that a whole decode takes far longer
/// than the moment of cancellation (noise does not compress). The test asserts the outcome, not a
/// time; it prints how long the cancelled decode took beside a whole one.
@Suite(.serialized) struct CancellationTests {
    /// Noise with a gradient: every row differs, so no codec can skip work.
    static func noise(width: Int, height: Int) -> Image {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        var state = UInt64.random(in: 1...UInt64.max, using: &generator)
        for i in stride(from: 0, to: bytes.count, by: 8) {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            for k in 0..<min(8, bytes.count - i) { bytes[i + k] = UInt8(truncatingIfNeeded: state >> (8 * k)) }
        }
        return Image(bitmap: Bitmap(width: width, height: height, pixelFormat: .rgb8, bytes: bytes))
    }

    static let files: [(type: ImageType, data: Data)] = {
        let large = noise(width: 4_000, height: 3_000)
        let small = noise(width: 1_600, height: 1_200)   // x265 encodes slowly
        var files: [(ImageType, Data)] = []
        for (type, image, encoder) in [
            (ImageType.gif, large, ImageEncoders.GIF() as any ImageEncoding),
            (.webp, large, ImageEncoders.WebP(options: ImageEncodingOptions(quality: 0.9))),
            (.jpeg, large, ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.95, isProgressive: true))),
            (.png, large, ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 1))),
            (.heic, small, ImageEncoders.HEIF(format: .heic, options: ImageEncodingOptions(quality: 0.9))),
        ] {
            if let data = try? encoder.encode(image) { files.append((type, data)) }
        }
        return files
    }()

    static var types: [ImageType] { [.gif, .webp, .jpeg, .png, .heic] }

    private static func file(_ type: ImageType) throws -> Data {
        try #require(files.first { $0.type == type }?.data, "\(type.name) could not be encoded here")
    }

    /// Runs `body` after `delay` on a thread outside Swift's cooperative pool.
    static func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: body)
    }

    @Test(arguments: types)
    func aCancelledTokenStopsTheDecode(_ type: ImageType) async throws {
        let data = try Self.file(type)
        let clock = ContinuousClock()
        let whole = try clock.measure { _ = try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data)) }
        // A loaded machine can hold the timer back until a decode is over: up to three tries,
        // cancelling earlier each time. A plugin that ignores the token finishes all three.
        for attempt in 0..<3 {
            let token = ImageDecodingCancellation()
            let started = clock.now
            let decode = Task.detached {
                try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data, cancellation: token))
            }
            // From a thread of its own: the test's task might wait for a cooperative thread (other
            // suites decode on them) until the decode is over.
            let moment = whole / (20 << attempt)
            Self.after(moment) { token.cancel() }
            let result = await decode.result
            let stopped = clock.now - started
            guard case .failure(let failure) = result else { continue }
            let error = failure as? ImageCodecError
            #expect(error?.code == .cancelled, "\(type.name): \(String(describing: failure))")
            print("cancellation: \(type.name) \(data.count) bytes, whole decode \(whole), cancelled at \(moment), stopped after \(stopped)")
            return
        }
        Issue.record("\(type.name): three decodes ran to the end although their tokens were cancelled")
    }

    @Test(arguments: types)
    func aCancelledTaskStopsTheDecode(_ type: ImageType) async throws {
        let data = try Self.file(type)
        // As above: a loaded machine can hold the timer back until a decode is over (in CI the
        // 5 ms timer once fired after whole JPEG and HEIC decodes), so up to three tries,
        // cancelling earlier each time. A plugin that ignores the task finishes all three.
        for attempt in 0..<3 {
            let decode = Task.detached {
                try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data))
            }
            Self.after(.microseconds(5_000 >> (2 * attempt))) { decode.cancel() }
            let result = await decode.result
            guard case .failure(let failure) = result else { continue }
            let error = failure as? ImageCodecError
            #expect(error?.code == .cancelled, "\(type.name): \(String(describing: failure))")
            return
        }
        Issue.record("\(type.name): three decodes ran to the end although their tasks were cancelled")
    }
}
