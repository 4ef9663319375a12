#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
import NukeCore

extension ImageDecodingSession {
    /// The state a session shares with its worker task and its events' termination handler.
    ///
    /// Everything mutable is in ``state``, one `Mutex`. Events are yielded while holding it,
    /// so a cancellation and the worker's events cannot interleave out of order. No decoder
    /// or other user code runs under that lock.
    ///
    /// Decoding runs on a serial dispatch queue, not in the cooperative thread pool: a decode
    /// blocks its thread for as long as the codec works, and many sessions must not starve
    /// the app's async tasks. The ``Worker`` (the decoder and the data) is only touched on that
    /// queue; its own `Mutex` makes that checkable and is never contended.
    final class Core: Sendable {
        struct State {
            /// Chunks appended since the worker last looked, in order.
            var pending: [Data] = []
            var bytesReceived = 0
            /// Bytes the worker has looked at.
            var bytesProcessed = 0
            var isFinished = false
            /// The events have ended (final image, failure or cancellation).
            var isEnded = false
            var waiters: [CheckedContinuation<Void, Never>] = []
            /// A worker run is queued or running.
            var isScheduled = false
            /// Bumped by every wake-up; a run ends only when it has seen the latest.
            var wakeGeneration = 0
        }

        /// What the worker takes from the state at each wake-up.
        struct Snapshot {
            var chunks: [Data]
            var bytesReceived: Int
            var isFinished: Bool
            var isEnded: Bool
            var wakeGeneration: Int
        }

        let configuration: Configuration
        let cancellation = ImageDecodingCancellation()
        let startTime = ContinuousClock.now
        private let state = Mutex(State())
        private let eventContinuation: AsyncStream<Event>.Continuation
        private let queue = DispatchQueue(label: "com.github.kean.nuke.decoding-session", qos: .userInitiated)
        private let worker: Mutex<Worker>

        init(configuration: Configuration, events: AsyncStream<Event>.Continuation) {
            self.configuration = configuration
            self.eventContinuation = events
            self.worker = Mutex(Worker(configuration: configuration))
        }

        /// Schedules a worker run unless one is queued or running; a running one sees the
        /// wake-up and goes round again. This is where chunks get coalesced.
        func wake() {
            let schedule = state.withLock { state -> Bool in
                state.wakeGeneration += 1
                guard !state.isScheduled, !state.isEnded else { return false }
                state.isScheduled = true
                return true
            }
            if schedule {
                queue.async { self.run() }
            }
        }

        /// Runs the worker until it has seen every wake-up. On ``queue`` only.
        private func run() {
            while true {
                let snapshot = take()
                if snapshot.isEnded { return }
                let done = worker.withLock { $0.step(snapshot, core: self) }
                markProcessed(snapshot.bytesReceived)
                let again = state.withLock { state -> Bool in
                    if done || state.isEnded || state.wakeGeneration == snapshot.wakeGeneration {
                        state.isScheduled = false
                        return false
                    }
                    return true
                }
                if !again { return }
            }
        }

        var bytesReceived: Int {
            state.withLock { $0.bytesReceived }
        }

        /// The bytes the worker holds (for tests).
        var heldByteCount: Int {
            worker.withLock { $0.heldByteCount }
        }

        var isEnded: Bool {
            state.withLock { $0.isEnded }
        }

        func append(_ chunk: Data) {
            let accepted = state.withLock { state -> Bool in
                precondition(!state.isFinished, "ImageDecodingSession.append(_:) called after finish()")
                guard !state.isEnded else { return false }
                guard !chunk.isEmpty else { return false }
                state.pending.append(chunk)
                state.bytesReceived += chunk.count
                return true
            }
            if accepted { wake() }
        }

        func finish() {
            let changed = state.withLock { state -> Bool in
                guard !state.isFinished else { return false }
                state.isFinished = true
                return true
            }
            if changed { wake() }
        }

        /// Wakes the worker after `delay` (for the minimum preview interval).
        func wake(after delay: Duration) {
            let (seconds, attoseconds) = delay.components
            let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [weak self] in
                self?.wake()
            }
        }

        func cancel() {
            let error = ImageCodecError(.cancelled, stage: .decoding, message: "the decoding session was cancelled")
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                guard !state.isEnded else { return [] }
                cancellation.cancel()
                state.isEnded = true
                eventContinuation.yield(.failure(error))
                eventContinuation.finish()
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.resume() }
        }

        /// The session object went away: cancel unless it was finished.
        func abandon() {
            let finished = state.withLock { $0.isFinished }
            if !finished { cancel() }
        }

        /// Takes the chunks appended since the last call.
        func take() -> Snapshot {
            state.withLock { state in
                defer { state.pending = [] }
                return Snapshot(chunks: state.pending, bytesReceived: state.bytesReceived,
                                isFinished: state.isFinished, isEnded: state.isEnded, wakeGeneration: state.wakeGeneration)
            }
        }

        /// Yields an event unless the events already ended; a terminal event ends them.
        ///
        /// - Returns: `false` when the event was dropped because the session had ended.
        @discardableResult
        func emit(_ event: Event) -> Bool {
            let terminal: Bool
            switch event {
            case .final, .failure: terminal = true
            default: terminal = false
            }
            let (delivered, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                guard !state.isEnded else { return (false, []) }
                eventContinuation.yield(event)
                guard terminal else { return (true, []) }
                state.isEnded = true
                eventContinuation.finish()
                defer { state.waiters = [] }
                return (true, state.waiters)
            }
            waiters.forEach { $0.resume() }
            return delivered
        }

        /// The worker has looked at the first `count` bytes.
        func markProcessed(_ count: Int) {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.bytesProcessed = count
                guard state.bytesProcessed >= state.bytesReceived else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.resume() }
        }

        func waitUntilProcessed() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.isEnded || state.bytesProcessed >= state.bytesReceived { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
