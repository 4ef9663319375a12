#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import NukeCore
import Synchronization

/// Warm helper processes that decode for this process, each one decode at a time.
///
/// A decode takes an idle helper (or starts one, up to ``IsolationConfiguration/maximumHelpers``;
/// beyond that it waits), and gives it back when done. A helper that crashed, timed out or was
/// killed is reaped and forgotten; one whose resident memory grew past
/// ``IsolationLimits/maxHelperResidentBytes`` is retired. ``shutdown()`` ends every idle helper;
/// so does releasing the pool.
///
/// Helpers start as copies of a zygote, the helper program started once per pool and warmed up
/// (``IsolationConfiguration/startsHelpersFromZygote``); it ends with the pool's last helper
/// after ``shutdown()``.
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
        var sandboxed: Bool?
        var sandboxNote: String?
        var lastStart: Duration?
    }

    private let state = Mutex(State())

    private struct Zygote {
        var current: HelperZygote?
        /// Zygotes that died or could not start; after three, helpers start as programs.
        var failures = 0
        var note: String?
    }

    private let zygote = Mutex(Zygote())

    /// The number of processors, for the default pool size.
    static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public init(configuration: IsolationConfiguration = IsolationConfiguration()) {
        self.configuration = configuration
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
        /// Helpers waiting for work.
        public var idle: Int
        /// Helpers decoding now.
        public var busy: Int
        /// Helpers started since the pool was made.
        public var started: Int
        /// Helpers ended because they crashed, hung, were killed or grew too large.
        public var replaced: Int
        /// Whether the last helper that started installed its sandbox (`nil` before the first).
        public var isSandboxed: Bool?
        /// What the sandbox allows of the file system, or why it is off.
        public var sandboxNote: String?
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
    }

    public var status: Status {
        let (current, note) = zygote.withLock { ($0.current, $0.note) }
        return state.withLock {
            Status(idle: $0.idle.count, busy: $0.busy, started: $0.started, replaced: $0.replaced, isSandboxed: $0.sandboxed,
                   sandboxNote: $0.sandboxNote, lastStartDuration: $0.lastStart, idlePIDs: $0.idle.map(\.pid),
                   busyPIDs: $0.busyPIDs.sorted(), zygotePID: current?.pid, zygoteStartDuration: current?.startDuration,
                   zygoteNote: note)
        }
    }

    /// Starts helpers until `count` are idle, so that the first decodes do not pay for a start.
    public func prewarm(_ count: Int = 1) throws(ImageCodecError) {
        var started: [HelperProcess] = []
        let wanted = min(count, configuration.maximumHelpers) - state.withLock { $0.idle.count + $0.busy }
        for _ in 0..<max(0, wanted) { started.append(try spawn()) }
        state.withLock { $0.idle.append(contentsOf: started) }
    }

    /// Ends every idle helper; helpers decoding now end when their decode does, and the zygote
    /// with the last of them. Later decodes fail with `.cancelled`.
    public func shutdown() {
        let (idle, busy) = state.withLock { state in
            state.isShutDown = true
            defer { state.idle.removeAll() }
            return (state.idle, state.busy)
        }
        idle.forEach { $0.retire() }
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
            enum Next { case helper(HelperProcess), spawn, wait, closed }
            let next: Next = state.withLock { state in
                if state.isShutDown { return .closed }
                if let helper = state.idle.popLast() {
                    state.busy += 1
                    state.busyPIDs.insert(helper.pid)
                    return .helper(helper)
                }
                if state.busy + state.idle.count < configuration.maximumHelpers {
                    state.busy += 1
                    return .spawn
                }
                return .wait
            }
            switch next {
            case .helper(let helper) where helper.isBroken:
                helper.kill()
                discard(helper)
            case .helper(let helper): return helper
            case .closed: throw ImageCodecError(.cancelled, stage: .registry, codec: "NukeIsolation", message: "the helper pool was shut down")
            case .wait: usleep(500)
            case .spawn:
                do {
                    let helper = try spawn()
                    state.withLock { _ = $0.busyPIDs.insert(helper.pid) }
                    return helper
                } catch {
                    state.withLock { $0.busy -= 1 }
                    throw error
                }
            }
        }
    }

    private func spawn() throws(ImageCodecError) -> HelperProcess {
        var forked: HelperProcess?
        if let zygote = warmZygote() {
            do {
                forked = try HelperProcess.fork(from: zygote, configuration)
            } catch {
                self.zygote.withLock { $0.note = error.message }
            }
        }
        let helper: HelperProcess
        if let forked {
            helper = forked
        } else {
            helper = try HelperProcess.spawn(configuration)
        }
        state.withLock {
            $0.started += 1
            $0.sandboxed = helper.isSandboxed
            $0.sandboxNote = helper.sandboxNote
            $0.lastStart = helper.startDuration
        }
        return helper
    }

    /// Gives a helper back after a decode that ended cleanly; retires it when it grew too large.
    func checkIn(_ helper: HelperProcess) {
        // The pixel buffers kept for reuse are resident on purpose: they do not count.
        let tooLarge = (helper.residentBytes ?? 0) - helper.buffers.mappedBytes > configuration.limits.maxHelperResidentBytes
        state.withLock { _ = $0.busyPIDs.remove(helper.pid) }
        let keep = !tooLarge && state.withLock { state in
            state.busy -= 1
            if state.isShutDown { return false }
            state.idle.append(helper)
            return true
        }
        if tooLarge {
            state.withLock {
                $0.busy -= 1
                $0.replaced += 1
            }
        }
        if !keep { helper.retire() }
        endZygoteIfShutDownAndIdle()
    }

    /// Forgets a helper that was killed or died (already reaped).
    func discard(_ helper: HelperProcess) {
        state.withLock {
            $0.busyPIDs.remove(helper.pid)
            $0.busy -= 1
            $0.replaced += 1
        }
        endZygoteIfShutDownAndIdle()
    }

    private func endZygoteIfShutDownAndIdle() {
        if state.withLock({ $0.isShutDown && $0.busy == 0 }) { endZygote() }
    }
}
