import Foundation
import NukeConformance
import NukeCore
import NukeSession
@testable import NukePNG
import Testing

/// The checks of the plugin-contract issue, as an app would see them: a catch-all decoder cannot
/// launder a file over the limits, a corrupt upload fails before it has been downloaded in full,
/// and a third-party format's header hook gives the session its size.
@Suite struct PluginContractTests {
    /// A decoder that accepts anything and returns a 1×1 image: the fallback an app might register.
    struct CatchAll: ImageDecoding {
        func decode(_ data: Data) throws -> ImageContainer {
            ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [0])))
        }
    }

    @Test func catchAllCannotBypassALimit() throws {
        let registry = ImageDecoderRegistry(codecs: [.png])
        registry.register(priority: -1, name: "catch-all") { _ in CatchAll() }
        registry.limits = ImageLimits(maxPixelCount: 100)
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 20, height: 20, format: .rgb8)))
        let error = try #require(throws: ImageCodecError.self) { try registry.decode(data) }
        #expect(error.code == .limitExceeded)
        #expect(error.attempts.isEmpty, "the core refused it before any decoder: \(error.attempts)")
    }

    /// Registered at startup without a priority, a catch-all is tried first (the newest of
    /// equals): the core still checks the header against the limits before it sees the data,
    /// one-shot, in pieces and in a session.
    @Test func aCatchAllTriedFirstStillMeetsTheLimits() async throws {
        let registry = ImageDecoderRegistry(codecs: [.png])
        registry.register(name: "catch-all") { _ in CatchAll() }
        registry.limits = ImageLimits(maxPixelCount: 100)
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 20, height: 20, format: .rgb8)))
        #expect(registry.registeredCodecs.first?.name == "catch-all")
        let oneShot = try #require(throws: ImageCodecError.self) { try registry.decode(data) }
        #expect(oneShot.code == .limitExceeded, "\(oneShot)")
        let pieces = try #require(throws: ImageCodecError.self) {
            try registry.decode(registry.makeContext(for: data.prefix(8)), reading: data.dropFirst(8).pieces(ofSize: 7))
        }
        #expect(pieces.code == .limitExceeded, "\(pieces)")
        let session = ImageDecodingSession(configuration: .init(registry: registry))
        session.append(data)
        session.finish()
        var failure: ImageCodecError?
        for await event in session.events {
            if case .failure(let error) = event { failure = error }
        }
        #expect(failure?.code == .limitExceeded, "\(String(describing: failure))")
        // Within the limits, the catch-all still decodes it (it was tried first).
        registry.limits = .default
        #expect(try registry.decode(data).image.width == 1)
    }

    /// ``NukeCore/ImageDecoderRegistry/streamingDecode(_:)``, driven piece by piece as a server
    /// reading an upload drives it: the pieces give the image the whole file gives; a file
    /// complete before its last piece (`IEND`) ends there; and the piece that breaks a chunk's CRC
    /// throws `.corrupt`, the pieces after it never pushed.
    @Test func aStreamingDecodeEndsAtItsVerdict() throws {
        let registry = ImageDecoderRegistry(codecs: [.png])
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 0))
            .encode(Image(bitmap: PNGTestImages.gradient(width: 200, height: 100, format: .rgb8)))
        let whole = try registry.decode(data).image.bitmap
        func pieces(of data: Data) -> [Data] {
            stride(from: 64, to: data.count, by: 1_000).map { data[$0..<min(data.count, $0 + 1_000)] }
        }
        var decode = try registry.streamingDecode(registry.makeContext(for: data.prefix(64)))
        var final: ImageContainer?
        for piece in pieces(of: data) where final == nil { final = try decode.push(piece) }
        #expect(try (final ?? decode.finish()).image.bitmap == whole)
        // Bytes after IEND are not needed: the image comes with the piece that holds it.
        var early = try registry.streamingDecode(registry.makeContext(for: data.prefix(64)))
        #expect(try early.push(data.dropFirst(64) + Data(count: 1_000))?.image.bitmap == whole)
        #expect(early.isEnded)

        var bytes = [UInt8](data)
        bytes[bytes.count / 3] ^= 0xFF  // in an IDAT chunk of 8 KiB, the third of about 8
        let corrupt = Data(bytes)
        var failing = try registry.streamingDecode(registry.makeContext(for: corrupt.prefix(64)))
        var pushed = 0
        let error = try #require(throws: ImageCodecError.self) {
            for piece in pieces(of: corrupt) {
                pushed += 1
                _ = try failing.push(piece)
            }
            _ = try failing.finish()
        }
        #expect(error.code == .corrupt, "\(error)")
        #expect(error.format == .png)
        #expect(pushed < pieces(of: corrupt).count, "the verdict came at piece \(pushed) of \(pieces(of: corrupt).count)")
    }

    @Test func catchAllStillCatchesWhatNoFormatDecoderAccepts() throws {
        let registry = ImageDecoderRegistry(codecs: [.png])
        registry.register(priority: -1, name: "catch-all") { _ in CatchAll() }
        #expect(try registry.decode(Data("not an image".utf8)).image.width == 1)
    }

    @Test func foreignErrorsKeepTheirUnderlyingError() throws {
        struct Refusal: Error, Equatable { var reason: String }
        struct Refusing: ImageDecoding {
            func decode(_ data: Data) throws -> ImageContainer { throw Refusal(reason: "hardware busy") }
        }
        let registry = ImageDecoderRegistry()
        registry.register(name: "refusing") { _ in Refusing() }
        let error = try #require(throws: ImageCodecError.self) { try registry.decode(Data([1, 2, 3])) }
        #expect(error.code == .decoderFailed)
        #expect(error.underlyingError as? Refusal == Refusal(reason: "hardware busy"))
    }

    @Test func corruptPNGFedInChunksFailsBeforeTheLastChunk() async throws {
        // A 4 MB PNG of noise (many IDAT chunks) whose second IDAT chunk has a bad CRC.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(1024 * 1024 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let bitmap = Bitmap(width: 1024, height: 1024, pixelFormat: .rgba8, bytes: noise)
        var data = try ImageEncoders.PNG().encode(Image(bitmap: bitmap))
        // libpng writes 8 KiB IDAT chunks: the CRC after its data.
        try Self.corruptSecondIDAT(&data, at: 8192)
        let (last, failedAt) = await Self.lastEvent(feeding: data, to: ImageDecodingSession(configuration: .init(registry: ImageDecoderRegistry(codecs: [.png]))))
        guard case .failure(let error)? = last else {
            Issue.record("expected a failure, got \(String(describing: last))")
            return
        }
        #expect(error.code == .corrupt)
        #expect(failedAt < data.count / 4, "failed after \(failedAt) of \(data.count) bytes")
    }

    /// Issue 42: verdicts are final. With a catch-all registered as a fallback, a PNG whose second
    /// IDAT chunk has a bad CRC fails as corrupt (the PNG decoder's verdict), one-shot and in a
    /// session fed 4 KB pieces, and is never handed to the catch-all (which would answer 1 × 1).
    @Test func aCorruptVerdictDoesNotFallThroughToACatchAll() async throws {
        // Uncompressed, so that the 256 KB of pixels span many 8 KB IDAT chunks.
        var data = try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 0))
            .encode(Image(bitmap: PNGTestImages.gradient(width: 256, height: 256, format: .rgba8)))
        try Self.corruptSecondIDAT(&data, at: 100)
        let registry = ImageDecoderRegistry(codecs: [.png])
        registry.register(priority: -1, name: "catch-all") { _ in CatchAll() }
        let oneShot = try #require(throws: ImageCodecError.self) { try registry.decode(data) }
        #expect(oneShot.code == .corrupt, "\(oneShot)")
        #expect(oneShot.attempts.count == 1, "\(oneShot.attempts)")
        for progressive in [true, false] {
            let (last, _) = await Self.lastEvent(feeding: data, to: ImageDecodingSession(configuration: .init(registry: registry, isProgressive: progressive)))
            guard case .failure(let error)? = last else {
                Issue.record("progressive \(progressive): expected the PNG decoder's failure, got \(String(describing: last))")
                continue
            }
            #expect(error.code == .corrupt, "progressive \(progressive): \(error)")
        }
    }

    /// Flips a byte `offset` bytes into the second IDAT chunk's data (or its CRC).
    static func corruptSecondIDAT(_ data: inout Data, at offset: Int) throws {
        let idat = Data("IDAT".utf8)
        let first = try #require(data.range(of: idat))
        let second = try #require(data.range(of: idat, in: first.upperBound..<data.endIndex))
        data[second.upperBound + offset] ^= 0xFF
    }

    /// Appends `data` 4 KiB at a time, as a download would, until the session ends (then
    /// finishes it): its last event, and how many bytes it had been given.
    static func lastEvent(feeding data: Data, to session: ImageDecodingSession) async -> (ImageDecodingSession.Event?, Int) {
        let events = Task { () -> ImageDecodingSession.Event? in
            var last: ImageDecodingSession.Event?
            for await event in session.events { last = event }
            return last
        }
        var offset = 0
        while offset < data.count, !session.isEnded {
            let end = min(offset + 4096, data.count)
            session.append(data[offset..<end])
            offset = end
            await session.waitUntilProcessed()
        }
        if !session.isEnded { session.finish() }
        return (await events.value, offset)
    }

    @Test func thirdPartyHeaderHookGivesTheSessionItsSize() async throws {
        // A made-up format: "TOY!" then width and height as big-endian UInt16.
        let toy = ImageType(rawValue: "com.example.toy")
        ImageType.register(toy, name: "TOY") { $0.starts(with: Array("TOY!".utf8)) }
        let registry = ImageDecoderRegistry()
        registry.register(for: toy, name: "toy", header: { data in
            guard data.count >= 8 else { return .needsMoreData }
            let b = [UInt8](data.prefix(8))
            return .parsed(ImageHeader(type: toy, width: Int(b[4]) << 8 | Int(b[5]), height: Int(b[6]) << 8 | Int(b[7])))
        }) { _ in CatchAll() }
        let session = ImageDecodingSession(configuration: .init(registry: registry))
        let events = Task { () -> [ImageDecodingSession.Event] in
            var all: [ImageDecodingSession.Event] = []
            for await event in session.events { all.append(event) }
            return all
        }
        session.append(Data("TOY!".utf8) + Data([0x01, 0x40, 0x00, 0xF0]) + Data(repeating: 0, count: 32))
        session.finish()
        let received = await events.value
        let sizes = received.compactMap { event -> ImageSize? in
            if case .sizeKnown(let header) = event { return header.size }
            return nil
        }
        #expect(sizes.first == ImageSize(width: 320, height: 240))
    }
}
