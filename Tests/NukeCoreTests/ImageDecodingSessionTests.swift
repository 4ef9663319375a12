import Foundation
import Synchronization
import Testing
@testable import NukeCore
@testable import NukeSession

/// What a ``SessionFakeDecoder`` saw, shared with the test.
///
/// The test waits for what the decoder does (``waitUntil(_:)``) rather than polling against a
/// deadline: the decoder signals each change, so a test whose task waits for a cooperative
/// thread on a loaded machine is late, never wrong.
private final class SessionProbe: Sendable {
    struct State {
        var decodersCreated = 0
        var partialLengths: [Int] = []
        var finalLength: Int?
        var contexts: [ImageDecodingContext] = []
        var sawCancellation = false
        /// When the decoder first saw the cancellation (independent of how fast the test's
        /// own tasks get scheduled).
        var cancellationSeenAt: ContinuousClock.Instant?
        var isInsideDecode = false
        /// While `false`, decodes wait (the test decides when a decode may finish).
        var isGateOpen = true
    }

    private struct Waiter {
        var condition: @Sendable (State) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private let state = Mutex((probe: State(), waiters: [Waiter]()))

    var snapshot: State { state.withLock { $0.probe } }

    /// Changes the state and resumes the waiters whose condition now holds.
    func update(_ body: (inout State) -> Void) {
        let ready = state.withLock { state -> [Waiter] in
            body(&state.probe)
            let probe = state.probe
            let ready = state.waiters.filter { $0.condition(probe) }
            state.waiters.removeAll { $0.condition(probe) }
            return ready
        }
        ready.forEach { $0.continuation.resume() }
    }

    /// Returns once `condition` holds, as signalled by the decoder or the test (no deadline).
    func waitUntil(_ condition: @escaping @Sendable (State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state -> Bool in
                if condition(state.probe) { return true }
                state.waiters.append(Waiter(condition: condition, continuation: continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }
}

/// A progressive fake decoder: every partial call with more data than the last returns a
/// preview whose scan number counts those calls (the same data again gives `nil`, as the
/// protocol asks); while the probe's gate is closed it "decodes", checking the context's
/// cancellation as a codec does between rows.
private final class SessionFakeDecoder: ImageDecoding {
    let probe: SessionProbe
    let context: ImageDecodingContext
    let finalError: ImageCodecError?
    let calls = Mutex(0)
    let lastLength = Mutex(-1)

    init(probe: SessionProbe, context: ImageDecodingContext, finalError: ImageCodecError? = nil) {
        self.probe = probe
        self.context = context
        self.finalError = finalError
        probe.update {
            $0.decodersCreated += 1
            $0.contexts.append(context)
        }
    }

    /// Works until the gate opens; `false` when cancelled first.
    private func work() -> Bool {
        probe.update { $0.isInsideDecode = true }
        defer { probe.update { $0.isInsideDecode = false } }
        repeat {
            if context.isCancelled {
                probe.update {
                    $0.sawCancellation = true
                    if $0.cancellationSeenAt == nil { $0.cancellationSeenAt = .now }
                }
                return false
            }
            if !probe.snapshot.isGateOpen { Thread.sleep(forTimeInterval: 0.001) }
        } while !probe.snapshot.isGateOpen
        return true
    }

    func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
        let isNew = lastLength.withLock { last in
            defer { last = data.count }
            return data.count > last
        }
        guard isNew else { return nil }
        probe.update { $0.partialLengths.append(data.count) }
        guard work() else { return nil }
        let scan = calls.withLock { calls -> Int in
            calls += 1
            return calls
        }
        let bitmap = Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [UInt8(truncatingIfNeeded: scan)])
        return ImageContainer(image: Image(bitmap: bitmap), type: .jpeg, isPreview: true, userInfo: [.scanNumberKey: scan])
    }

    func decode(_ data: Data) throws -> ImageContainer {
        probe.update { $0.finalLength = data.count }
        guard work() else {
            throw ImageCodecError(.cancelled, stage: .decoding, format: .jpeg, codec: "fake", message: "cancelled")
        }
        if let finalError { throw finalError }
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .gray8, bytes: [200, 201])
        return ImageContainer(image: Image(bitmap: bitmap), type: .jpeg)
    }
}

/// A JPEG-looking stream: SOI, SOF0 for 640×480, then filler "scan" bytes.
private func fakeJPEG(count: Int = 4_096, width: Int = 640, height: Int = 480) -> Data {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF),
                          UInt8(width >> 8), UInt8(width & 0xFF), 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    bytes += [UInt8](repeating: 0x5A, count: max(0, count - bytes.count))
    return Data(bytes)
}

/// The fake decoder's header hook: the SOF0 that ``fakeJPEG(count:width:height:)`` writes at byte 2.
@Sendable private func fakeJPEGHeader(_ data: Data) -> ImageHeader.ParseResult {
    guard data.count >= 11 else { return .needsMoreData }
    let b = [UInt8](data.prefix(11))
    guard b[2] == 0xFF, b[3] == 0xC0 else { return .unavailable }
    return .parsed(ImageHeader(type: .jpeg, width: Int(b[9]) << 8 | Int(b[10]), height: Int(b[7]) << 8 | Int(b[8])))
}

/// A registry holding one fake JPEG decoder, with its header hook.
private func makeRegistry(probe: SessionProbe, finalError: ImageCodecError? = nil) -> ImageDecoderRegistry {
    let registry = ImageDecoderRegistry()
    registry.register(for: .jpeg, name: "fake", header: fakeJPEGHeader) { context in
        SessionFakeDecoder(probe: probe, context: context, finalError: finalError)
    }
    return registry
}

/// Collects every event of a session.
private func collect(_ session: ImageDecodingSession) async -> [ImageDecodingSession.Event] {
    var events: [ImageDecodingSession.Event] = []
    for await event in session.events { events.append(event) }
    return events
}

/// A compact description of an event sequence: "format size preview preview final".
private func kinds(_ events: [ImageDecodingSession.Event]) -> [String] {
    events.map { event in
        switch event {
        case .formatKnown: "format"
        case .sizeKnown: "size"
        case .preview: "preview"
        case .final: "final"
        case .failure: "failure"
        }
    }
}

private func chunks(of data: Data, size: Int) -> [Data] {
    stride(from: 0, to: data.count, by: size).map { data.subdata(in: $0..<min($0 + size, data.count)) }
}

@Suite struct ImageDecodingSessionTests {
    @Test func eventsInOrderWithOneDecoder() async throws {
        let probe = SessionProbe()
        let data = fakeJPEG()
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe)))
        async let events = collect(session)
        for chunk in chunks(of: data, size: 512) {
            session.append(chunk)
            await session.waitUntilProcessed()
            // The decoder has every byte: the session keeps none of them.
            #expect(session.heldByteCount == 0)
        }
        session.finish()
        let received = await events
        #expect(kinds(received) == ["format", "size"] + Array(repeating: "preview", count: 8) + ["final"])
        guard case .formatKnown(let type) = received[0], case .sizeKnown(let header) = received[1] else {
            Issue.record("unexpected first events \(received.prefix(2))")
            return
        }
        #expect(type == .jpeg)
        #expect(header.size == ImageSize(width: 640, height: 480))
        var previousScan = 0
        for event in received {
            if case .preview(let preview, let progress) = event {
                #expect(preview.isPreview)
                #expect(progress.scanNumber == previousScan + 1)
                #expect(progress.index == previousScan + 1)
                previousScan += 1
            }
        }
        guard case .final(let final, let progress) = received.last else {
            Issue.record("no final image")
            return
        }
        #expect(final.image.width == 2)
        #expect(progress.bytesReceived == data.count)
        let seen = probe.snapshot
        #expect(seen.decodersCreated == 1)
        #expect(seen.partialLengths == Array(stride(from: 512, through: data.count, by: 512)))
        #expect(seen.finalLength == data.count)
        #expect(seen.contexts.first?.isCompleted == false)
        #expect(seen.contexts.first?.cancellation != nil)
    }

    @Test func chunksArrivingDuringADecodeAreCoalesced() async throws {
        let probe = SessionProbe()
        let data = fakeJPEG(count: 20_000)
        probe.update { $0.isGateOpen = false }
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe)))
        async let events = collect(session)
        let pieces = chunks(of: data, size: 100)
        #expect(pieces.count == 200)
        session.append(pieces[0])
        // While the first partial decode runs (held at the gate), the other 199 chunks arrive.
        await probe.waitUntil { $0.isInsideDecode }
        for chunk in pieces.dropFirst() { session.append(chunk) }
        probe.update { $0.isGateOpen = true }
        await session.waitUntilProcessed()
        session.finish()
        let received = await events
        let seen = probe.snapshot
        // One decode of the first chunk, then one of everything that arrived meanwhile.
        #expect(seen.partialLengths == [100, data.count])
        #expect(seen.finalLength == data.count)
        #expect(seen.decodersCreated == 1)
        #expect(kinds(received) == ["format", "size", "preview", "preview", "final"])
    }

    @Test func cancellationReachesTheDecoder() async throws {
        let probe = SessionProbe()
        // The gate stays closed: the decode can only end by seeing the cancellation, however
        // late this task gets to cancel it (no timer that a loaded machine could outlast).
        probe.update { $0.isGateOpen = false }
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe)))
        async let events = collect(session)
        session.append(fakeJPEG(count: 1_000))
        await probe.waitUntil { $0.isInsideDecode }
        session.cancel()
        let received = await events
        guard case .failure(let error) = received.last else {
            Issue.record("expected a failure, got \(received)")
            return
        }
        #expect(error.code == .cancelled)
        // The decoder stops because it saw the cancellation (its gate never opens).
        await probe.waitUntil { !$0.isInsideDecode }
        #expect(probe.snapshot.sawCancellation)
        #expect(probe.snapshot.cancellationSeenAt != nil)
        // Appending and finishing after cancellation do nothing.
        session.append(Data([1, 2, 3]))
        session.finish()
        session.cancel()
    }

    @Test func consumerCancellationCancelsTheSession() async throws {
        let probe = SessionProbe()
        probe.update { $0.isGateOpen = false }
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe)))
        let consumer = Task { await collect(session) }
        session.append(fakeJPEG(count: 1_000))
        await probe.waitUntil { $0.isInsideDecode }
        consumer.cancel()
        _ = await consumer.value
        // The gate never opens, so only the cancellation can end the decode.
        await probe.waitUntil { $0.sawCancellation }
    }

    @Test func minimumPreviewInterval() async throws {
        let probe = SessionProbe()
        let interval = Duration.milliseconds(150)
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe), minimumPreviewInterval: interval))
        async let events = collect(session)
        let data = fakeJPEG(count: 6_000)
        let pieces = chunks(of: data, size: 200)
        let started = ContinuousClock.now
        for chunk in pieces {
            session.append(chunk)
            await session.waitUntilProcessed()
            try await Task.sleep(for: .milliseconds(10))
        }
        let appending = ContinuousClock.now - started
        // The deferred wake-up decodes the last bytes: wait for the decoder to have seen them.
        await probe.waitUntil { $0.partialLengths.last == data.count }
        session.finish()
        let received = await events
        let previews = received.compactMap { event -> ImageDecodingSession.Progress? in
            if case .preview(_, let progress) = event { return progress }
            return nil
        }
        #expect(previews.count >= 2)
        // At most one preview per interval, however slowly the chunks came.
        #expect(previews.count <= Int(appending / interval) + 2, "previews: \(previews.count) in \(appending)")
        #expect(previews.count < pieces.count)
        for (a, b) in zip(previews, previews.dropFirst()) {
            #expect(b.elapsed - a.elapsed >= interval - .milliseconds(5))
        }
        // The deferred wake-up decoded the tail before finish.
        #expect(previews.last?.bytesReceived == data.count)
        #expect(kinds(received).last == "final")
    }

    @Test func finalFailureIsATypedError() async throws {
        let probe = SessionProbe()
        let corrupt = ImageCodecError(.corrupt, stage: .decoding, codec: "fake", message: "bad Huffman table")
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe, finalError: corrupt)))
        async let events = collect(session)
        session.append(fakeJPEG())
        session.finish()
        let received = await events
        guard case .failure(let error) = received.last else {
            Issue.record("expected a failure, got \(received)")
            return
        }
        #expect(error.code == .corrupt)
        #expect(error.format == .jpeg)
        #expect(error.message == "bad Huffman table")
        #expect(kinds(received).first == "format")
    }

    @Test func noDecoderIsNoCodec() async throws {
        let session = ImageDecodingSession(configuration: .init(registry: ImageDecoderRegistry()))
        async let events = collect(session)
        session.append(fakeJPEG())
        session.finish()
        let received = await events
        // No codec, so no header hook either: the size stays unknown.
        #expect(kinds(received) == ["format", "failure"])
        guard case .failure(let error) = received.last else { return }
        #expect(error.code == .noCodec)
        #expect(error.format == .jpeg)
    }

    @Test func headerOverLimitsFailsBeforeADecoderExists() async throws {
        let probe = SessionProbe()
        let session = ImageDecodingSession(configuration: .init(
            registry: makeRegistry(probe: probe), limits: ImageLimits(maxPixelCount: 1_000_000)
        ))
        async let events = collect(session)
        session.append(fakeJPEG(width: 20_000, height: 20_000))
        let received = await events
        #expect(kinds(received) == ["format", "failure"])
        guard case .failure(let error) = received.last else { return }
        #expect(error.code == .limitExceeded)
        #expect(probe.snapshot.decodersCreated == 0)
    }

    @Test func targetSizeIsChosenFromTheHeaderBeforeTheDecoder() async throws {
        let probe = SessionProbe()
        let chosen = Mutex<ImageHeader?>(nil)
        let session = ImageDecodingSession(configuration: .init(
            registry: makeRegistry(probe: probe),
            targetSize: { header in
                chosen.withLock { $0 = header }
                return ImageSize(width: header.width / 4, height: header.height / 4)
            },
            contentMode: .aspectFit
        ))
        async let events = collect(session)
        let data = fakeJPEG()
        session.append(data.prefix(10))
        await session.waitUntilProcessed()
        #expect(probe.snapshot.decodersCreated == 0, "no decoder before the header is complete")
        session.append(data.dropFirst(10))
        session.finish()
        _ = await events
        #expect(chosen.withLock { $0?.size } == ImageSize(width: 640, height: 480))
        let context = try #require(probe.snapshot.contexts.first)
        #expect(context.targetSize == ImageSize(width: 160, height: 120))
        #expect(context.contentMode == .aspectFit)
    }

    @Test func customDecoderForAnUnknownFormat() async throws {
        /// A non-progressive decoder for data starting with "NUKE".
        struct NukeDecoder: ImageDecoderRegistering {
            init?(data: Data, context: ImageDecodingContext) {
                guard data.starts(with: Array("NUKE".utf8)) else { return nil }
            }
            func decode(_ data: Data) throws -> ImageContainer {
                ImageContainer(image: Image(bitmap: Bitmap(width: 3, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 9, count: 24))))
            }
        }
        let registry = ImageDecoderRegistry()
        registry.register(NukeDecoder.self)
        let session = ImageDecodingSession(configuration: .init(registry: registry))
        async let events = collect(session)
        for chunk in chunks(of: Data(Array("NUKE".utf8) + [UInt8](repeating: 1, count: 300)), size: 7) {
            session.append(chunk)
        }
        session.finish()
        let received = await events
        #expect(kinds(received) == ["size", "final"])
        guard case .sizeKnown(let header) = received.first else { return }
        #expect(header.size == ImageSize(width: 3, height: 2))
        #expect(header.hasAlpha == true)
    }

    @Test func nonProgressiveConfigurationDecodesOnce() async throws {
        let probe = SessionProbe()
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: probe), isProgressive: false))
        async let events = collect(session)
        for chunk in chunks(of: fakeJPEG(), size: 256) {
            session.append(chunk)
            await session.waitUntilProcessed()
        }
        session.finish()
        #expect(kinds(await events) == ["format", "size", "final"])
        #expect(probe.snapshot.partialLengths.isEmpty)
        #expect(probe.snapshot.contexts.first?.isCompleted == true)
    }

    @Test func emptyInputFails() async throws {
        let session = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: SessionProbe())))
        async let events = collect(session)
        session.finish()
        let received = await events
        #expect(kinds(received) == ["failure"])
    }

    @Test func droppingAnUnfinishedSessionEndsItsEvents() async throws {
        var session: ImageDecodingSession? = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: SessionProbe())))
        let events = session!.events
        session?.append(fakeJPEG(count: 100))
        session = nil
        var last: ImageDecodingSession.Event?
        for await event in events { last = event }
        guard case .failure(let error) = last else {
            Issue.record("expected a cancellation, got \(String(describing: last))")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test func droppingAFinishedSessionStillDelivers() async throws {
        var session: ImageDecodingSession? = ImageDecodingSession(configuration: .init(registry: makeRegistry(probe: SessionProbe())))
        let events = session!.events
        session?.append(fakeJPEG())
        session?.finish()
        session = nil
        var last: ImageDecodingSession.Event?
        for await event in events { last = event }
        guard case .final = last else {
            Issue.record("expected the final image, got \(String(describing: last))")
            return
        }
    }
}

/// Returns every pending scan of the same data one call at a time, as NukeJPEG does when one
/// chunk completes several progressive scans.
private final class ScanQueueDecoder: ImageDecoding {
    /// Scans completed per byte received: scan k is complete once `k * 10` bytes arrived.
    let shown = Mutex(0)

    func decodePartiallyDownloadedData(_ data: Data) -> ImageContainer? {
        shown.withLock { shown -> ImageContainer? in
            guard shown < data.count / 10 else { return nil }
            shown += 1
            let bitmap = Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [UInt8(truncatingIfNeeded: shown)])
            return ImageContainer(image: Image(bitmap: bitmap), type: .jpeg, isPreview: true, userInfo: [.scanNumberKey: shown])
        }
    }

    func decode(_ data: Data) throws -> ImageContainer {
        ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [0])), type: .jpeg)
    }
}

struct ImageDecodingSessionScanTests {
    @Test func everyScanOfAChunkGetsItsPreview() async {
        let registry = ImageDecoderRegistry()
        registry.register(for: .jpeg) { _ in ScanQueueDecoder() }
        let session = ImageDecodingSession(configuration: .init(registry: registry))
        // Two chunks of 35 bytes: the first completes scans 1–3, the second 4–7.
        var header = Data([0xFF, 0xD8, 0xFF])
        header.append(Data(count: 32))
        session.append(header)
        await session.waitUntilProcessed()
        session.append(Data(count: 35))
        await session.waitUntilProcessed()
        session.finish()
        var scans: [Int] = []
        var sawFinal = false
        for await event in session.events {
            switch event {
            case .preview(_, let progress): scans.append(progress.scanNumber ?? -1)
            case .final: sawFinal = true
            default: break
            }
        }
        #expect(scans == [1, 2, 3, 4, 5, 6, 7])
        #expect(sawFinal)
    }
}
