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

/// One helper process, seen from the host: its pid and its end of the socket.
///
/// ## Why this is `Sendable`
///
/// Every stored property is a `let` of a `Sendable` type; the process and the socket are used by
/// one decode, which ``HelperPool`` guarantees by handing each helper to one caller once.
final class HelperProcess: Sendable {
    let pid: Int32
    let socket: Int32
    /// The sandbox layers the helper reported entering.
    let sandbox: SandboxStatus
    /// Whether the helper installed its sandbox.
    var isSandboxed: Bool { sandbox.isActive }
    /// How long the helper took from spawn to ready.
    let startDuration: Duration
    /// Its claim on the pool's pixel buffers, released once it has been reaped.
    let lease: SharedPixelBuffers.Lease

    /// The zygote this helper is a copy of (it reaps the helper), or `nil` for a helper this
    /// process started itself.
    private let zygote: HelperZygote?

    private init(pid: Int32, socket: Int32, zygote: HelperZygote?, ready: WireMessage, startDuration: Duration, requiresSandbox: Bool,
                 lease: SharedPixelBuffers.Lease) throws(ImageCodecError) {
        var reader = WireReader(ready.payload)
        guard ready.kind == .ready, (try? reader.bool()) != nil, (try? reader.string()) != nil,
              let encoded = try? reader.bytes(), let sandbox = try? SandboxStatus(decoding: encoded) else {
            Self.kill(pid: pid, socket: socket, zygote: zygote)
            throw Self.setupError("the helper answered with something other than ready (is the helper program older than this library?)")
        }
        // A helper that was to enter the sandbox and could not does not decode.
        if requiresSandbox, !sandbox.isActive {
            Self.kill(pid: pid, socket: socket, zygote: zygote)
            throw ImageCodecError(.sandboxViolation, stage: .registry, codec: "NukeIsolation",
                                  message: "the helper could not enter its sandbox: \(sandbox.failure ?? "unknown")")
        }
        self.pid = pid
        self.socket = socket
        self.zygote = zygote
        self.sandbox = sandbox
        self.startDuration = startDuration
        self.lease = lease
    }

    /// Starts a helper and waits for it to say it is ready (sandbox installed, codecs warm).
    ///
    /// - Throws: ``NukeCore/ImageCodecError`` `.internalFailure` when the program cannot be started
    ///   or does not answer in helper mode within 10 seconds.
    static func spawn(_ configuration: IsolationConfiguration, lease: SharedPixelBuffers.Lease) throws(ImageCodecError) -> HelperProcess {
        let started = ContinuousClock.now
        let (pid, socket, ready) = try launch(configuration)
        return try HelperProcess(pid: pid, socket: socket, zygote: nil, ready: ready, startDuration: .now - started,
                                 requiresSandbox: configuration.isSandboxed, lease: lease)
    }

    /// Starts a helper as a copy of `zygote` (warm already, so only the sandbox is left to
    /// install) and waits for it to say it is ready.
    static func fork(from zygote: HelperZygote, _ configuration: IsolationConfiguration, lease: SharedPixelBuffers.Lease) throws(ImageCodecError) -> HelperProcess {
        let started = ContinuousClock.now
        let (pid, socket) = try zygote.fork()
        let ready: WireMessage
        do {
            ready = try receive(socket: socket, deadline: nukeiso_now_ms() + 10_000) { $0 == .ready ? 64 << 10 : 0 }
        } catch {
            kill(pid: pid, socket: socket, zygote: zygote)
            throw setupError("a helper started by the zygote did not say it was ready: \(error.reason)")
        }
        return try HelperProcess(pid: pid, socket: socket, zygote: zygote, ready: ready, startDuration: .now - started,
                                 requiresSandbox: configuration.isSandboxed, lease: lease)
    }

    /// Starts the configured program in helper mode with `extraArguments`, sends it the warm-up
    /// samples and returns its first answer.
    static func launch(_ configuration: IsolationConfiguration, extraArguments: [String] = []) throws(ImageCodecError) -> (pid: Int32, socket: Int32, ready: WireMessage) {
        var arguments = [configuration.helper.path] + configuration.helper.arguments + [IsolationHelperExecutable.helperModeFlag] + extraArguments
        if !configuration.isSandboxed { arguments.append("--no-sandbox") }
        if !configuration.usesLandlock { arguments.append("--no-landlock") }
        arguments += ["--sandbox-uid", String(configuration.sandboxUserID), "--sandbox-gid", String(configuration.sandboxGroupID)]
        if configuration.helperNiceness > 0 { arguments += ["--sandbox-nice", String(configuration.helperNiceness)] }
        arguments += ["--sandbox-threads", String(configuration.helperThreadLimit),
                      "--sandbox-helper-threads", String(configuration.threadsPerHelper)]
        var socket: Int32 = -1
        let pid = withCStrings(arguments) { argv in
            nukeiso_spawn(configuration.helper.path, argv, configuration.standardError ?? -1, &socket)
        }
        guard pid > 0 else {
            throw setupError("cannot start the helper \(configuration.helper.path): \(String(cString: strerror(-pid)))")
        }
        do {
            try write(WireMessage(.warmUp, WarmUpSamples.payload(for: configuration.warmUpFormats)), to: socket)
            return (pid, socket, try receive(socket: socket, deadline: nukeiso_now_ms() + 10_000) { $0 == .ready ? 64 << 10 : 0 })
        } catch {
            kill(pid: pid, socket: socket, zygote: nil)
            throw setupError("the helper \(configuration.helper.path) did not start in helper mode (does its main call IsolatedDecoding.runHelperIfRequested()?): \(error.reason)")
        }
    }

    static func setupError(_ message: String) -> ImageCodecError {
        ImageCodecError(.internalFailure, stage: .registry, codec: "NukeIsolation", message: message)
    }

    /// Why talking to the helper failed.
    struct Failure: Error {
        /// `violation`: it sent what no helper running this library's code sends (a message of
        /// an unknown kind or over its bound, a malformed one, sizes beyond the decode's limits).
        enum Kind { case closed, timedOut, io, violation }
        var kind: Kind
        var reason: String
    }

    // MARK: - Messages

    func send(_ message: WireMessage) throws(Failure) {
        try Self.write(message, to: socket)
    }

    /// The helper's next message, at most `bound(kind)` bytes long.
    func receive(deadline: Int64, bound: (WireMessage.Kind) -> Int) throws(Failure) -> WireMessage {
        try Self.receive(socket: socket, deadline: deadline, bound: bound)
    }

    static func write(_ message: WireMessage, to socket: Int32) throws(Failure) {
        let result = message.write(to: socket)
        guard result == 0 else { throw Failure(kind: .closed, reason: "writing to the helper: \(String(cString: strerror(-result)))") }
    }

    /// A message of at most `bound(kind)` bytes: its length is checked before anything is
    /// allocated for it.
    static func receive(socket: Int32, deadline: Int64, bound: (WireMessage.Kind) -> Int) throws(Failure) -> WireMessage {
        var header = [UInt8](repeating: 0, count: 5)
        try read(&header, socket: socket, deadline: deadline)
        guard let kind = WireMessage.Kind(rawValue: header[0]) else { throw Failure(kind: .violation, reason: "a message of unknown kind \(header[0])") }
        let length = Int(UInt32(header[1]) | UInt32(header[2]) << 8 | UInt32(header[3]) << 16 | UInt32(header[4]) << 24)
        guard length <= bound(kind) else { throw Failure(kind: .violation, reason: "a \(kind) message of \(length) bytes (at most \(bound(kind)))") }
        var payload = [UInt8](repeating: 0, count: length)
        if length > 0 { try read(&payload, socket: socket, deadline: deadline) }
        return WireMessage(kind, Data(payload))
    }

    private static func read(_ buffer: inout [UInt8], socket: Int32, deadline: Int64) throws(Failure) {
        let count = buffer.count
        let result = buffer.withUnsafeMutableBytes { raw in nukeiso_read_all(socket, raw.baseAddress!, count, deadline) }
        switch result {
        case 0: return
        case 1: throw Failure(kind: .closed, reason: "the helper closed its socket")
        case 2: throw Failure(kind: .timedOut, reason: "no answer before the deadline")
        default: throw Failure(kind: .io, reason: String(cString: strerror(-result)))
        }
    }

    // MARK: - Ending

    /// Reaps the helper if it ended (`block`: when it ends). A helper whose zygote is gone
    /// ended with it.
    private static func wait(pid: Int32, zygote: HelperZygote?, block: Bool) -> nukeiso_exit {
        if let zygote {
            return zygote.wait(pid, block: block) ?? nukeiso_exit(kind: 1, value: 0)
        }
        var exit = nukeiso_exit()
        if nukeiso_wait(pid, block ? 1 : 0, &exit) != 0 { return nukeiso_exit(kind: 1, value: 0) }
        return exit
    }

    /// Closes the socket (a healthy helper exits at end of file), waits briefly, then kills.
    func retire() {
        nukeiso_close(socket)
        if awaitExit(of: pid, milliseconds: 2_000, reap: { [pid, zygote] block in Self.wait(pid: pid, zygote: zygote, block: block) }) == nil {
            _ = nukeiso_kill(pid, SIGKILL)
            _ = Self.wait(pid: pid, zygote: zygote, block: true)
        }
    }

    /// Kills the helper now and reaps it; returns how it ended.
    @discardableResult
    func kill() -> nukeiso_exit {
        Self.kill(pid: pid, socket: socket, zygote: zygote)
    }

    @discardableResult
    private static func kill(pid: Int32, socket: Int32, zygote: HelperZygote?) -> nukeiso_exit {
        let ended = wait(pid: pid, zygote: zygote, block: false)
        if ended.kind != 0 {
            nukeiso_close(socket)
            return ended
        }
        _ = nukeiso_kill(pid, SIGKILL)
        let killed = wait(pid: pid, zygote: zygote, block: true)
        nukeiso_close(socket)
        return killed
    }

    /// Waits (up to a second) for a helper that closed its socket to end, and reaps it.
    func reapAfterClose() -> nukeiso_exit {
        guard let ended = awaitExit(of: pid, milliseconds: 1_000, reap: { [pid, zygote] block in Self.wait(pid: pid, zygote: zygote, block: block) }) else {
            return kill()
        }
        nukeiso_close(socket)
        return ended
    }

    /// Whether an idle helper can no longer serve: it died (killed from outside, or with its
    /// zygote) or sent something unasked.
    var isBroken: Bool {
        nukeiso_idle_socket_is_broken(socket) != 0
    }

    /// The helper's resident memory in bytes, or `nil` when unknown.
    var residentBytes: Int? {
        let rss = nukeiso_rss(pid)
        return rss >= 0 ? Int(rss) : nil
    }
}

/// Calls `body` with a NULL-terminated C array of the strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Waits up to `milliseconds` for `pid` to end, then reaps it with `reap` (`true`: block until it
/// has); `nil` when it is still running. The kernel says when (a pidfd); before Linux 5.3, polls.
func awaitExit(of pid: Int32, milliseconds: Int64, reap: (_ block: Bool) -> nukeiso_exit) -> nukeiso_exit? {
    switch nukeiso_await_exit(pid, Int32(clamping: milliseconds)) {
    case 1:
        return reap(true)
    case 0:
        return nil
    default:
        let deadline = nukeiso_now_ms() + milliseconds
        repeat {
            let ended = reap(false)
            if ended.kind != 0 { return ended }
            usleep(1_000)
        } while nukeiso_now_ms() < deadline
        return nil
    }
}
