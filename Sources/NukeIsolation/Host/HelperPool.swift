#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NukeCore
import Synchronization

/// Sandboxed helper processes that decode for this process, one decode each.
///
/// A decode takes a fresh helper (a spare started ahead of demand, or a new one, up to
/// ``IsolationConfiguration/maximumHelpers`` at once; beyond that it waits). When the decode ends
/// the helper ends too and the pool starts a spare in its place, off the caller's path
/// (``IsolationConfiguration/spareHelpers``; at checkout rather than at the end while decodes
/// keep finding no spare ready): no helper ever sees two decodes' data, so code an
/// attacker ran in one learns nothing of the next upload and can change nothing the host holds.
/// A helper that crashed, timed out or was killed is reaped. `shutdown()` ends every spare; so
/// does releasing the pool.
///
/// Helpers start as copies of a zygote, the helper program started once per pool and warmed up
/// (``IsolationConfiguration/startsHelpersFromZygote``); it ends with the pool's last helper
/// after `shutdown()`.
///
/// ```swift
/// let pool = HelperPool()                       // helpers: this program in helper mode
/// IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)
/// ```
public final class HelperPool: Sendable {
    public let configuration: IsolationConfiguration

    private struct State {
        var idle: [HelperProcess] = []
        var busy = 0
        var busyPIDs: Set<Int32> = []
        var isShutDown = false
        var started = 0
        var replaced = 0
        var sandbox: SandboxStatus?
        var lastStart: Duration?
        /// Spares being started, and used helpers being reaped, in the background.
        var replenishing = 0
        var retiring = 0
        /// Checkouts that start their replacement spare at once rather than when their decode
        /// ends: set after a decode found no spare ready (demand outran the spares).
        var earlySpareStarts = 0
        /// Bumped by every change a thread in ``checkOut()`` may be waiting for.
        var generation = 0
    }

    /// How many checkouts after a decode found no spare ready start their replacement beside
    /// their decode.
    private static let earlyStartsAfterShortfall = 8

    private let state = Mutex(State())
    /// Signalled after every change that a waiting thread may be waiting for: a decode ended, a
    /// spare is ready or failed, a helper was reaped, the pool shut down.
    private let changed = StateSignal()

    private struct Zygote {
        var current: HelperZygote?
        /// Zygotes that died or could not start; after three, helpers start as programs.
        var failures = 0
        var note: String?
    }

    private let zygote = Mutex(Zygote())

    /// The number of processors, for the default pool size.
    static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The pixel memory lent to helpers, kept for reuse.
    let buffers: SharedPixelBuffers

    public init(configuration: IsolationConfiguration = IsolationConfiguration()) {
        self.configuration = configuration
        buffers = SharedPixelBuffers(budget: configuration.reusablePixelBytes)
    }

    deinit {
        let idle = state.withLock { state in
            defer { state.idle.removeAll() }
            return state.idle
        }
        idle.forEach { $0.retire() }
        zygote.withLock { $0.current?.shutdown() }
    }

    /// What the pool has done, for `nuke formats` and tests.
    public struct Status: Sendable, Hashable {
        /// Fresh helpers waiting for a decode.
        public var idle: Int
        /// Helpers decoding now.
        public var busy: Int
        /// Helpers started since the pool was made.
        public var started: Int
        /// Helpers that crashed, hung, broke the sandbox or were killed.
        public var replaced: Int
        /// Helpers whose decode is over, being reaped in the background.
        public var ending: Int
        /// The sandbox layers the last helper that started entered (`nil` before the first).
        public var sandbox: SandboxStatus?
        /// Whether the last helper that started installed its sandbox (`nil` before the first).
        public var isSandboxed: Bool? { sandbox?.isActive }
        /// The active layers, or why the sandbox is off.
        public var sandboxNote: String? { sandbox?.summary }
        /// How long the last helper took to start and warm up.
        public var lastStartDuration: Duration?
        /// The pids of the idle helpers.
        public var idlePIDs: [Int32]
        /// The pids of the helpers decoding now.
        public var busyPIDs: [Int32]
        /// The zygote's pid while helpers start from one.
        public var zygotePID: Int32?
        /// How long the zygote took to start and warm up.
        public var zygoteStartDuration: Duration?
        /// Why helpers start as programs although the configuration asks for a zygote.
        public var zygoteNote: String?
        /// Bytes of shared pixel memory this process has mapped: images in use that helpers
        /// decoded, and idle buffers kept to lend again (at most
        /// ``IsolationConfiguration/reusablePixelBytes`` of those). A helper that wrote into a
        /// buffer counted it in its own resident memory too: it is the same memory.
        public var sharedPixelBytes: Int = 0
    }

    public var status: Status {
        let (current, note) = zygote.withLock { ($0.current, $0.note) }
        let shared = buffers.mappedBytes
        return state.withLock {
            Status(idle: $0.idle.count, busy: $0.busy, started: $0.started, replaced: $0.replaced, ending: $0.retiring, sandbox: $0.sandbox,
                   lastStartDuration: $0.lastStart, idlePIDs: $0.idle.map(\.pid),
                   busyPIDs: $0.busyPIDs.sorted(), zygotePID: current?.pid, zygoteStartDuration: current?.startDuration,
                   zygoteNote: note, sharedPixelBytes: shared)
        }
    }

    /// Starts helpers until `count` are waiting, so that the first decodes do not pay for a start.
    public func prewarm(_ count: Int = 1) throws(ImageCodecError) {
        var started: [HelperProcess] = []
        // Spares already starting in the background count once they are ready.
        changed.wait(timeout: .seconds(10)) { state.withLock { $0.replenishing == 0 } }
        let wanted = min(count, configuration.maximumHelpers + configuration.spareHelpers) - state.withLock { $0.idle.count }
        for _ in 0..<max(0, wanted) { started.append(try spawn()) }
        state.withLock {
            $0.idle.append(contentsOf: started)
            $0.generation &+= 1
        }
        changed.broadcast()
    }

    /// ``shutdown()`` from async code: it waits for helpers to end (up to seconds), so it waits
    /// on a `BlockingWorkQueue` thread while the calling task suspends, never on a cooperative
    /// thread.
    public func shutdown() async {
        await BlockingWorkQueue.shared.run { self.shutdown() }
    }

    /// Ends every idle helper; helpers decoding now end when their decode does, and the zygote
    /// with the last of them. Later decodes fail with `.cancelled`. It waits for them: from async
    /// code, call the async overload.
    public func shutdown() {
        let (idle, busy) = state.withLock { state in
            state.isShutDown = true
            state.generation &+= 1
            defer { state.idle.removeAll() }
            return (state.idle, state.busy)
        }
        idle.forEach { $0.retire() }
        // Spares starting and helpers being reaped in the background finish first (a few
        // milliseconds each), so that no helper outlives the call.
        changed.broadcast()
        changed.wait(timeout: .seconds(10)) { state.withLock { $0.replenishing + $0.retiring == 0 } }
        if busy == 0 { endZygote() }
    }

    /// Ends the zygote (its helpers end with it).
    private func endZygote() {
        let ending = zygote.withLock { zygote in
            defer { zygote.current = nil }
            return zygote.current
        }
        ending?.shutdown()
    }

    /// A running zygote to start helpers from: the current one, or a new one when there is none
    /// yet or it died; `nil` when the configuration turns zygotes off or they keep failing.
    private func warmZygote() -> HelperZygote? {
        guard configuration.startsHelpersFromZygote else { return nil }
        return zygote.withLock { zygote -> HelperZygote? in
            // After shutdown() nothing starts a zygote again (its end takes this lock too).
            guard !state.withLock({ $0.isShutDown }) else { return nil }
            if let current = zygote.current {
                if current.isRunning { return current }
                current.shutdown()
                zygote.current = nil
                zygote.failures += 1
                zygote.note = "the zygote died"
            }
            guard zygote.failures < 3 else { return nil }
            do throws(ImageCodecError) {
                zygote.current = try HelperZygote.start(configuration)
                return zygote.current
            } catch {
                // Starting fails the same way each time: do not pay for it again.
                zygote.failures = 3
                zygote.note = error.message
                return nil
            }
        }
    }

    // MARK: - Checking out

    func checkOut() throws(ImageCodecError) -> HelperProcess {
        while true {
            enum Next { case helper(HelperProcess, startsSpareNow: Bool), spawn, wait(seen: Int), closed }
            let next: Next = state.withLock { state in
                if state.isShutDown { return .closed }
                // At most `maximumHelpers` decodes at once; spares do not count until they decode.
                // A wait remembers the generation it decided on, under the same lock: a change
                // between the decision and the sleep is then not missed.
                guard state.busy < configuration.maximumHelpers else { return .wait(seen: state.generation) }
                if let helper = state.idle.popLast() {
                    state.busy += 1
                    state.busyPIDs.insert(helper.pid)
                    let early = state.earlySpareStarts > 0
                    if early { state.earlySpareStarts -= 1 }
                    return .helper(helper, startsSpareNow: early)
                }
                state.earlySpareStarts = Self.earlyStartsAfterShortfall
                // A spare on its way is sooner than a new start.
                if state.replenishing > 0 { return .wait(seen: state.generation) }
                state.busy += 1
                return .spawn
            }
            switch next {
            case .helper(let helper, _) where helper.isBroken:
                helper.kill()
                discard(helper)
            case .helper(let helper, let startsSpareNow):
                // The spare that replaces this helper starts when its decode ends (checkIn): a
                // fork and a sandbox beside the decode compete with it for the processors (the
                // scheduler tends to put the zygote on the decoding helper's core) and slow it
                // by about a millisecond. While demand outruns the spares, it starts now.
                if startsSpareNow { replenish() }
                return helper
            case .closed: throw ImageCodecError(.cancelled, stage: .registry, codec: "NukeIsolation", message: "the helper pool was shut down")
            case .wait(let seen):
                // Until a decode ends, a spare is ready (or failed to start), or the pool shuts down.
                changed.wait { state.withLock { $0.generation != seen } }
            case .spawn:
                do {
                    let helper = try spawn()
                    state.withLock { _ = $0.busyPIDs.insert(helper.pid) }
                    replenish()
                    return helper
                } catch {
                    state.withLock {
                        $0.busy -= 1
                        $0.generation &+= 1
                    }
                    changed.broadcast()
                    throw error
                }
            }
        }
    }

    private func spawn() throws(ImageCodecError) -> HelperProcess {
        guard !state.withLock({ $0.isShutDown }) else {
            throw ImageCodecError(.cancelled, stage: .registry, codec: "NukeIsolation", message: "the helper pool was shut down")
        }
        var forked: HelperProcess?
        if let zygote = warmZygote() {
            do {
                forked = try HelperProcess.fork(from: zygote, configuration, lease: buffers.makeLease())
            } catch {
                self.zygote.withLock { $0.note = error.message }
            }
        }
        let helper: HelperProcess
        if let forked {
            helper = forked
        } else {
            helper = try HelperProcess.spawn(configuration, lease: buffers.makeLease())
        }
        state.withLock {
            $0.started += 1
            $0.sandbox = helper.sandbox
            $0.lastStart = helper.startDuration
        }
        return helper
    }

    /// Starts spares in the background until ``IsolationConfiguration/spareHelpers`` wait (on top
    /// of the ``IsolationConfiguration/maximumHelpers`` that may decode at once).
    private func replenish() {
        let wanted = state.withLock { state -> Int in
            guard !state.isShutDown else { return 0 }
            let count = max(0, configuration.spareHelpers - state.idle.count - state.replenishing)
            state.replenishing += count
            return count
        }
        for _ in 0..<wanted {
            Self.background.async { [self] in
                let helper = try? spawn()
                let surplus = state.withLock { state -> HelperProcess? in
                    state.replenishing -= 1
                    state.generation &+= 1
                    guard let helper else { return nil }
                    if state.isShutDown { return helper }
                    state.idle.append(helper)
                    return nil
                }
                changed.broadcast()
                surplus?.retire()
            }
        }
    }

    /// Where spares start and used helpers are reaped, off the decodes' threads.
    private static let background = DispatchQueue(label: "NukeIsolation.HelperPool", attributes: .concurrent)

    /// Ends a helper whose decode is over (each serves one), and starts a spare in its place.
    func checkIn(_ helper: HelperProcess) {
        state.withLock {
            _ = $0.busyPIDs.remove(helper.pid)
            $0.busy -= 1
            $0.retiring += 1
            $0.generation &+= 1
        }
        changed.broadcast()
        Self.background.async { [self] in
            helper.retire()
            // Reaped: nothing it was lent can be written any more.
            buffers.ended(helper.lease)
            state.withLock {
                $0.retiring -= 1
                $0.generation &+= 1
            }
            changed.broadcast()
        }
        replenish()
        endZygoteIfShutDownAndIdle()
    }

    /// Forgets a helper that was killed or died (already reaped), and starts a spare in its place.
    func discard(_ helper: HelperProcess) {
        buffers.ended(helper.lease)
        state.withLock {
            $0.busyPIDs.remove(helper.pid)
            $0.busy -= 1
            $0.replaced += 1
            $0.generation &+= 1
        }
        changed.broadcast()
        replenish()
        endZygoteIfShutDownAndIdle()
    }

    private func endZygoteIfShutDownAndIdle() {
        if state.withLock({ $0.isShutDown && $0.busy == 0 }) { endZygote() }
    }
}
