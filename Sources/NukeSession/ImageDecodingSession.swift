#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import NukeCore

/// Decodes an image while its data arrives: previews as progressive scans or rows become
/// available, then the final image, delivered as an `AsyncSequence` of ``Event``s.
///
/// ```swift
/// let session = ImageDecodingSession(configuration: .init(
///     minimumPreviewInterval: .milliseconds(100),
///     targetSize: { header in ImageSize(width: 400, height: 400) }
/// ))
/// Task {
///     for try await chunk in download { session.append(chunk) }
///     session.finish()
/// }
/// for await event in session.events {
///     switch event {
///     case .formatKnown(let type): print("format", type)
///     case .sizeKnown(let header): print("size", header.size)
///     case .preview(let preview, let progress): show(preview.image, scan: progress.scanNumber)
///     case .final(let container, _): show(container.image)
///     case .failure(let error): print(error)
///     }
/// }
/// ```
///
/// The session sniffs the format as soon as enough bytes are in, reads the header with
/// `ImageHeader` and asks ``Configuration/targetSize`` for a target size, and only then
/// creates **one** decoder through the registry (any registered decoder, custom ones
/// included), whose context carries that size, the limits and the session's cancellation.
/// Every partial decode and the final decode run on that same instance.
///
/// Decoding runs off the caller's thread, on a serial dispatch queue of the session's own (a
/// decode blocks its thread, so it stays out of the cooperative pool), one decode at a time.
/// Chunks that arrive while a decode runs are coalesced: the next decode sees all of them at
/// once, so a fast network and a slow decoder cost far fewer decodes than chunks. With a
/// ``Configuration/minimumPreviewInterval``, data arriving sooner waits for the next preview
/// (the final image never waits). ``cancel()`` stops a decode in progress
/// inside the codec (decoders check `ImageDecodingContext.isCancelled` between rows or
/// scans) and ends the events with a `.cancelled` failure.
///
/// Events come in order: ``Event/formatKnown(_:)``, ``Event/sizeKnown(_:)``, any number of
/// ``Event/preview(_:_:)``, then exactly one ``Event/final(_:_:)`` or ``Event/failure(_:)``.
/// A session that is released before ``finish()`` is cancelled; one that was finished
/// delivers its final event even if nothing holds it any more.
public final class ImageDecodingSession: Sendable {
    /// The events of this session, in order; it ends after the final image or a failure.
    ///
    /// One consumer. When the consumer stops iterating (its task is cancelled), the session
    /// is cancelled.
    public let events: AsyncStream<Event>

    /// The configuration the session was created with.
    public let configuration: Configuration

    private let core: Core

    /// Creates a session; it waits for ``append(_:)``.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let (events, eventContinuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let core = Core(configuration: configuration, events: eventContinuation)
        eventContinuation.onTermination = { [weak core] termination in
            if case .cancelled = termination { core?.cancel() }
        }
        self.events = events
        self.core = core
    }

    /// Adds bytes that have arrived. Ignored after ``cancel()``.
    ///
    /// Returns at once; decoding happens elsewhere. Appending after ``finish()`` is a
    /// programming error and traps.
    public func append(_ chunk: Data) {
        core.append(chunk)
    }

    /// Tells the session all data has arrived; it decodes the final image with the same
    /// decoder and ends. Calling it twice does nothing.
    public func finish() {
        core.finish()
    }

    /// Stops the session: a decode in progress stops inside the codec, no further previews
    /// are made and the events end with ``Event/failure(_:)`` (code `.cancelled`) unless they
    /// already ended.
    public func cancel() {
        core.cancel()
    }

    /// The number of bytes appended so far.
    public var bytesReceived: Int {
        core.bytesReceived
    }

    /// The bytes the session itself holds: all of them until a decoder takes the data, then only
    /// those it has not given the decoder yet (for tests).
    var heldByteCount: Int {
        core.heldByteCount
    }

    /// `true` once the events have ended: the final image, a failure or a cancellation. A
    /// download can stop as soon as it is, instead of fetching bytes nobody will decode.
    public var isEnded: Bool {
        core.isEnded
    }

    /// Suspends until the session has looked at every byte appended so far (made a preview
    /// of it, or decided not to), or has ended.
    ///
    /// A replay tool or a test calls it after each ``append(_:)`` to see one decode per chunk
    /// instead of coalesced ones.
    public func waitUntilProcessed() async {
        await core.waitUntilProcessed()
    }

    deinit {
        // Nobody can append any more: a session that was never finished can never end.
        core.abandon()
    }
}
