import Foundation
import NukeCore
import NukeGIF
import NukeHEIF
import NukeJPEG
import NukePNG
import NukeWebP
import Synchronization
import Testing

/// A decode cancelled while it runs stops with `.cancelled`, whether the caller's token or the
/// task is cancelled, in every plugin: between rows, scans, 64 KiB of WebP input, GIF row groups,
/// HEIF's decode and its rows.
///
/// Each image is made here by our encoders (noise does not compress, so no codec can skip work).
/// The cancellation comes from inside the decode, when the decoder asks for its first pixel
/// buffer: the tests assert the outcome and read no clock, so a loaded machine cannot change it.
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

    /// An allocator that calls `cancel` when the decoder asks for its first pixel buffer: the
    /// header is read and the decode under way, so the cancellation lands inside it, whatever the
    /// machine's load (no timer, no clock).
    static func cancelling(at allocation: Int = 1, _ cancel: @escaping @Sendable () -> Void) -> PixelAllocator {
        let count = Mutex(0)
        return PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            let n = count.withLock { n -> Int in
                n += 1
                return n
            }
            if n == allocation { cancel() }
            return try PixelAllocator.heap.allocate(byteCount: byteCount, zeroed: zeroed)
        }
    }

    @Test(arguments: types)
    func aCancelledTokenStopsTheDecode(_ type: ImageType) throws {
        let data = try Self.file(type)
        let token = ImageDecodingCancellation()
        var context = ImageDecodingContext(data: data, cancellation: token)
        context.allocator = Self.cancelling { token.cancel() }
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(context) }
        #expect(error?.code == .cancelled, "\(type.name): \(String(describing: error))")
    }

    @Test(arguments: types)
    func aCancelledTaskStopsTheDecode(_ type: ImageType) async throws {
        let data = try Self.file(type)
        // The decode's own task is cancelled from inside the decode: no token but the task's.
        let decode = Task.detached {
            var context = ImageDecodingContext(data: data)
            context.allocator = Self.cancelling { withUnsafeCurrentTask { $0?.cancel() } }
            return try ImageDecoderRegistry.shared.decode(context)
        }
        let result = await decode.result
        guard case .failure(let failure) = result else {
            Issue.record("\(type.name): the decode ran to the end although its task was cancelled")
            return
        }
        #expect((failure as? ImageCodecError)?.code == .cancelled, "\(type.name): \(String(describing: failure))")
    }
}
