#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CNukeIsolation
#if canImport(Glibc)
import Glibc
#endif
import NukeCore
import Synchronization

/// The helper program started once and warmed up, which starts each helper by forking itself.
///
/// Starting a helper program costs tens of milliseconds before it decodes anything: loading and
/// binding the codec libraries, the Swift runtime, each codec's first decode. A zygote pays that
/// once per pool; a copy of it has everything loaded and warm, and only installs its sandbox.
/// The zygote itself never reads untrusted bytes and runs no sandbox (it must fork); it only
/// answers the host's `.fork` and `.wait` messages, and ends when the host closes its socket.
///
/// The copies are the zygote's children, so it reaps them: ``wait(_:block:)`` asks it. Until
/// then a copy that ended stays a zombie, so its pid is not reused and signalling it stays safe.
///
/// ## Why this is `Sendable`
///
/// `pid` and `startDuration` are `let`s; the socket lives in a `Mutex`, which also keeps one
/// request and its answer together.
final class HelperZygote: Sendable {
    let pid: Int32
    /// How long the zygote took from spawn to ready.
    let startDuration: Duration
    /// The socket, -1 once closed.
    private let socket: Mutex<Int32>

    private init(pid: Int32, socket: Int32, startDuration: Duration) {
        self.pid = pid
        self.socket = Mutex(socket)
        self.startDuration = startDuration
    }

    /// Starts the configured helper program as a zygote and waits until it is warm.
    static func start(_ configuration: IsolationConfiguration) throws(ImageCodecError) -> HelperZygote {
        let started = ContinuousClock.now
        let (pid, socket, ready) = try HelperProcess.launch(configuration, extraArguments: [IsolationHelperExecutable.zygoteModeFlag])
        var reader = WireReader(ready.payload)
        let zygote = HelperZygote(pid: pid, socket: socket, startDuration: .now - started)
        guard ready.kind == .ready, let threads = try? reader.int() else {
            zygote.shutdown()
            throw HelperProcess.setupError("the zygote answered with something other than ready (is the helper program older than this library?)")
        }
        // A copy of a process with other threads could inherit a lock one of them held.
        guard threads == 1 else {
            zygote.shutdown()
            throw HelperProcess.setupError("the zygote runs \(threads) threads after warming up; it cannot fork safely")
        }
        return zygote
    }

    /// Starts a helper: a new socket pair, one end sent to the zygote, which forks; returns the
    /// helper's pid and this process's end.
    func fork() throws(ImageCodecError) -> (pid: Int32, socket: Int32) {
        var pair: [Int32] = [-1, -1]
        let made = nukeiso_socketpair(&pair)
        guard made == 0 else { throw HelperProcess.setupError("no socket for a helper: \(String(cString: strerror(-made)))") }
        let answer = request(WireMessage(.fork), descriptor: pair[1])
        nukeiso_close(pair[1])
        var reader = WireReader(answer ?? Data())
        let pid = (try? reader.int()) ?? 0
        guard pid > 0 else {
            nukeiso_close(pair[0])
            let reason = answer == nil ? "the zygote is gone" : pid < 0 ? String(cString: strerror(Int32(truncatingIfNeeded: -pid))) : "a malformed answer"
            throw HelperProcess.setupError("the zygote could not start a helper: \(reason)")
        }
        return (Int32(truncatingIfNeeded: pid), pair[0])
    }

    /// Reaps helper `pid` if it ended (`block`: when it ends); `nil` when the zygote is gone
    /// (its copies end with it).
    func wait(_ pid: Int32, block: Bool) -> nukeiso_exit? {
        var writer = WireWriter()
        writer.int(Int(pid))
        writer.bool(block)
        guard let answer = request(WireMessage(.wait, writer.data)) else { return nil }
        var reader = WireReader(answer)
        guard let result = try? reader.int(), let kind = try? reader.int(), let value = try? reader.int(), result == 0 else { return nil }
        return nukeiso_exit(kind: Int32(truncatingIfNeeded: kind), value: Int32(truncatingIfNeeded: value))
    }

    /// Whether the zygote still answers.
    var isRunning: Bool {
        socket.withLock { $0 >= 0 }
    }

    /// One message, a file descriptor after it when given, and the answer's payload; `nil` when
    /// the zygote is gone (the socket is then closed).
    private func request(_ message: WireMessage, descriptor: Int32? = nil) -> Data? {
        socket.withLock { socket -> Data? in
            guard socket >= 0 else { return nil }
            do throws(HelperProcess.Failure) {
                try HelperProcess.write(message, to: socket)
                if let descriptor, nukeiso_send_fd(socket, descriptor) != 0 {
                    throw HelperProcess.Failure(kind: .closed, reason: "sending a socket")
                }
                // A blocking wait answers when the helper ends, which a SIGKILL makes prompt.
                let answer = try HelperProcess.receive(socket: socket, deadline: nukeiso_now_ms() + 30_000) { _ in 64 }
                guard answer.kind == .forked || answer.kind == .waited else {
                    throw HelperProcess.Failure(kind: .io, reason: "an answer of kind \(answer.kind)")
                }
                return answer.payload
            } catch {
                nukeiso_close(socket)
                socket = -1
                return nil
            }
        }
    }

    /// Closes the zygote's socket (it exits at end of file), waits briefly, then kills it and
    /// reaps it. Its helpers end with it.
    func shutdown() {
        socket.withLock { socket in
            if socket >= 0 { nukeiso_close(socket) }
            socket = -1
        }
        let reap: (Bool) -> nukeiso_exit = { [pid] block in
            var exit = nukeiso_exit()
            // Already reaped (or never ours): ended.
            return nukeiso_wait(pid, block ? 1 : 0, &exit) == 0 ? exit : nukeiso_exit(kind: 1, value: 0)
        }
        if awaitExit(of: pid, milliseconds: 2_000, reap: reap) == nil {
            _ = nukeiso_kill(pid, SIGKILL)
            _ = reap(true)
        }
    }
}
