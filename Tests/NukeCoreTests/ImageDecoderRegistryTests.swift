import Foundation
import Synchronization
import Testing
@testable import NukeCore

struct ImageDecoderRegistryTests {
    let jpegLike = Data([0xFF, 0xD8, 0xFF, 0xDB, 0, 0, 0, 0, 0, 0, 0, 0])
    let magic = Data([MagicDecoder.magic, 1, 2, 3])

    @Test func emptyRegistryHasNoDecoders() {
        let registry = ImageDecoderRegistry()
        #expect(registry.registeredCodecs.isEmpty)
        #expect(registry.decoder(for: registry.makeContext(for: jpegLike)) == nil)
        let error = #expect(throws: ImageCodecError.self) { try registry.decode(jpegLike) }
        #expect(error?.code == .noCodec)
        #expect(error?.format == .jpeg)
        #expect(error?.message.contains("no decoder is registered for JPEG") == true)
    }

    @Test func registersDecoderType() throws {
        let registry = ImageDecoderRegistry()
        let registration = registry.register(MagicDecoder.self)
        #expect(try registry.decode(magic).testSample == 1)
        #expect(registry.decoder(for: registry.makeContext(for: jpegLike)) == nil)
        registry.unregister(registration)
        #expect(throws: ImageCodecError.self) { try registry.decode(magic) }
        registry.unregister(registration)  // twice is harmless
    }

    /// Issue 42: a Nuke-style decoder registered with a closure writes no limit or cancellation
    /// check of its own, and gets both: a 5 × 3 image under `maxPixelCount = 4` is refused, and a
    /// decode cancelled before it starts is not run.
    @Test func closureRegisteredDecodersGetLimitsAndCancellation() throws {
        final class Calls: Sendable { let count = Atomic(0) }
        struct FiveByThree: ImageDecoding {
            let calls: Calls
            func decode(_ data: Data) throws -> ImageContainer {
                calls.count.add(1, ordering: .relaxed)
                return ImageContainer(image: Image(bitmap: Bitmap(width: 5, height: 3, pixelFormat: .gray8, bytes: [UInt8](repeating: 0, count: 15))))
            }
        }
        let calls = Calls()
        let registry = ImageDecoderRegistry()
        registry.register { _ in FiveByThree(calls: calls) }
        #expect(try registry.decode(magic).image.width == 5)
        registry.limits = ImageLimits(maxPixelCount: 4)
        let limited = #expect(throws: ImageCodecError.self) { try registry.decode(magic) }
        #expect(limited?.code == .limitExceeded)
        registry.limits = .default
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        var context = registry.makeContext(for: magic)
        context.cancellation = cancellation
        let before = calls.count.load(ordering: .relaxed)
        let cancelled = #expect(throws: ImageCodecError.self) { try registry.decode(context) }
        #expect(cancelled?.code == .cancelled)
        #expect(calls.count.load(ordering: .relaxed) == before, "the decoder ran for a cancelled decode")
    }

    /// Issue 42: a closure-registered decoder that knows nothing of target sizes gets decode to
    /// size from the core: its 40 × 30 image comes back fitted to 10 × 10, resampled (a 2 × 2
    /// checkerboard of 0 and 200 averages to 100 inside), with the original size and scale in
    /// `userInfo`; without a target size it is returned as it decoded.
    @Test func closureRegisteredDecodersAreDecodedToSize() throws {
        struct Checkerboard: ImageDecoding {
            func decode(_ data: Data) throws -> ImageContainer {
                let bytes = (0..<30).flatMap { y in (0..<40).map { x in UInt8((x + y) % 2 == 0 ? 0 : 200) } }
                return ImageContainer(image: Image(bitmap: Bitmap(width: 40, height: 30, pixelFormat: .gray8, bytes: bytes)))
            }
        }
        let registry = ImageDecoderRegistry()
        registry.register { _ in Checkerboard() }
        #expect(try registry.decode(magic).image.width == 40)
        var context = registry.makeContext(for: magic)
        context.targetSize = ImageSize(width: 10, height: 10)
        context.contentMode = .aspectFit
        let container = try registry.decode(context)
        #expect(container.image.width == 10 && container.image.height == 8)
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 40, height: 30))
        #expect(container.userInfo[.decodeScaleKey] as? Double == 0.25)
        let inside = container.image.bitmap.withUnsafeBytes { Array($0) }
        #expect(abs(Int(inside[3 * 10 + 4]) - 100) <= 2, "not resampled: \(inside[3 * 10 + 4])")
    }

    @Test func closureRegistrationAndTypeFilter() throws {
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg, name: "fake-jpeg") { _ in MagicDecoder(sample: 7) }
        #expect(try registry.decode(jpegLike).testSample == 7)
        // The type filter keeps it away from other formats.
        #expect(throws: ImageCodecError.self) { try registry.decode(magic) }
        #expect(registry.registeredFormats == [.jpeg])
    }

    @Test func newestRegistrationWinsAmongEqualPriorities() throws {
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg) { _ in MagicDecoder(sample: 1) }
        let second = registry.register(for: .jpeg) { _ in MagicDecoder(sample: 2) }
        #expect(try registry.decode(jpegLike).testSample == 2)
        registry.unregister(second)
        #expect(try registry.decode(jpegLike).testSample == 1)
    }

    @Test func higherPriorityWinsRegardlessOfOrder() throws {
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg, priority: 10) { _ in MagicDecoder(sample: 10) }
        registry.register(for: .jpeg, priority: 0) { _ in MagicDecoder(sample: 0) }
        registry.register(for: .jpeg, priority: 5) { _ in MagicDecoder(sample: 5) }
        #expect(try registry.decode(jpegLike).testSample == 10)
        #expect(registry.registeredCodecs.map(\.priority) == [10, 5, 0])
    }

    @Test func codecOrderIsPriorityThenRegistrationOrder() {
        let a = ImageCodec(info: ImageCodecInfo(name: "A", type: .png, capabilities: .decode)) { _ in nil }
        let b = ImageCodec(info: ImageCodecInfo(name: "B", type: .jpeg, capabilities: .decode, priority: 1)) { _ in nil }
        let c = ImageCodec(info: ImageCodecInfo(name: "C", type: .gif, capabilities: .decode)) { _ in nil }
        let registry = ImageDecoderRegistry(codecs: [b, a, c])
        #expect(registry.registeredCodecs.map(\.name) == ["B", "A", "C"])
    }

    /// Only a decoder that says the data is not for it (`.noCodec`, `.unsupported`) lets the next
    /// one try; every attempt is reported.
    @Test func fallsThroughOnlyWhenTheDataIsNotForADecoder() throws {
        let registry = ImageDecoderRegistry()
        let unsupported = ImageCodecError(.unsupported, stage: .decoding, codec: "second", message: "arithmetic coding")
        let notMine = ImageCodecError(.noCodec, stage: .decoding, codec: "first", message: "not a baseline file")
        registry.register(for: .jpeg, name: "second") { _ in FailingDecoder(error: unsupported) }
        registry.register(for: .jpeg, name: "first") { _ in FailingDecoder(error: notMine) }
        let error = #expect(throws: ImageCodecError.self) { try registry.decode(jpegLike) }
        #expect(error?.code == .noCodec)  // the first candidate's error
        #expect(error?.attempts.map(\.codec) == ["first", "second"])
        #expect(error?.description.contains("arithmetic coding") == true)
        #expect(error?.description.contains("not a baseline file") == true)

        // A working decoder with lower priority is reached.
        registry.register(for: .jpeg, priority: -1, name: "works") { _ in MagicDecoder(sample: 3) }
        #expect(try registry.decode(jpegLike).testSample == 3)
    }

    /// Issue 42: a verdict on the data is final: corrupt or incomplete data, or a custom decoder's
    /// own error, is not handed to the next candidate.
    @Test func verdictsAreFinal() throws {
        for failure in [ImageCodecError(.corrupt, stage: .decoding, codec: "first", message: "bad huffman"),
                        ImageCodecError(.incomplete, stage: .decoding, codec: "first", message: "premature end")] {
            let registry = ImageDecoderRegistry()
            registry.register(for: .jpeg, priority: -1, name: "works") { _ in MagicDecoder(sample: 3) }
            registry.register(for: .jpeg, name: "first") { _ in FailingDecoder(error: failure) }
            let error = #expect(throws: ImageCodecError.self) { try registry.decode(jpegLike) }
            #expect(error?.code == failure.code)
            #expect(error?.attempts.map(\.codec) == ["first"])
        }
    }

    @Test func wrapsForeignErrors() {
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg, name: "foreign") { _ in ForeignErrorDecoder() }
        let error = #expect(throws: ImageCodecError.self) { try registry.decode(jpegLike) }
        #expect(error?.format == .jpeg)
        #expect(error?.codec == "foreign")
        #expect(error?.message.contains("Oops") == true)
    }

    @Test func cancellationStopsFallThrough() {
        let registry = ImageDecoderRegistry()
        let cancelled = ImageCodecError(.cancelled, stage: .decoding, message: "cancelled")
        registry.register(for: .jpeg, priority: -1) { _ in MagicDecoder(sample: 3) }
        registry.register(for: .jpeg) { _ in FailingDecoder(error: cancelled) }
        let error = #expect(throws: ImageCodecError.self) { try registry.decode(jpegLike) }
        #expect(error?.code == .cancelled)
    }

    @Test func noUserCodeRunsUnderTheLock() throws {
        // A matcher that re-enters the registry would deadlock if it ran under the lock.
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg) { [registry] _ in
            _ = registry.registeredCodecs
            registry.register(for: .png) { _ in nil }
            return MagicDecoder(sample: 4)
        }
        #expect(try registry.decode(jpegLike).testSample == 4)
    }

    @Test func limitsFlowIntoContexts() {
        let registry = ImageDecoderRegistry()
        registry.limits = ImageLimits(maxPixelCount: 42)
        let seen = Mutex<Int?>(nil)
        registry.register(for: .jpeg) { context in
            seen.withLock { $0 = context.limits.maxPixelCount }
            return MagicDecoder(sample: 0)
        }
        _ = try? registry.decode(jpegLike)
        #expect(seen.withLock { $0 } == 42)
        #expect(registry.makeContext(for: jpegLike).type == .jpeg)
    }

    @Test func concurrentRegistrationAndDecoding() async throws {
        let registry = ImageDecoderRegistry()
        registry.register(MagicDecoder.self)
        let data = magic
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask { () throws -> Void in
                    if i.isMultiple(of: 2) {
                        let token = registry.register(for: .png) { _ in nil }
                        registry.unregister(token)
                    } else {
                        #expect(try registry.decode(data).testSample == 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(registry.registeredCodecs.count == 1)
    }

    @Test func emptyDecoderAttachesData() throws {
        let decoder = ImageDecoders.Empty(type: .jpeg, isProgressive: true)
        let container = try decoder.decode(jpegLike)
        #expect(container.data == jpegLike)
        #expect(container.type == .jpeg)
        #expect(container.image.width == 0)
        #expect(decoder.decodePartiallyDownloadedData(jpegLike)?.isPreview == true)
        #expect(ImageDecoders.Empty().decodePartiallyDownloadedData(jpegLike) == nil)
    }
}
