#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
internal import CNukeIsolation
import NukeCore

/// An ``NukeCore/IncrementalImageDecoding`` whose work happens in a helper process.
///
/// Pushed bytes are forwarded to the helper as they come; each ``next()`` asks it for the next
/// event and waits at most ``IsolationLimits/wallTime``. Images come back in shared memory mapped
/// straight into a ``NukeCore/PixelStorage`` (no copy for the final image; one for a preview,
/// which the helper must not write into afterwards), reused from one decode to the next
/// (``HelperBuffers``). If the helper dies, hangs or breaks its
/// sandbox, the decode throws an ``NukeCore/ImageCodecError`` saying what happened; the helper
/// is reaped and the pool starts another for later decodes.
final class IsolatedIncrementalDecoder: IncrementalImageDecoding {
    private let pool: HelperPool
    private let context: ImageDecodingContext
    private let codecName: String
    private var helper: HelperProcess?
    private var wantsPreviews = true
    private var started = false
    private var bytesPushed = 0
    private var failure: ImageCodecError?
    private var result: ImageContainer?
    private var pending: [WireMessage] = []

    init(pool: HelperPool, context: ImageDecodingContext, codecName: String) {
        self.pool = pool
        self.context = context
        self.codecName = codecName
    }

    deinit {
        // Abandoned mid-decode: the helper may still be working on it, so it cannot be reused.
        if let helper {
            helper.kill()
            pool.discard(helper)
        }
    }

    func setWantsPreviews(_ wantsPreviews: Bool) { self.wantsPreviews = wantsPreviews }

    func push(_ bytes: Data) {
        bytesPushed += bytes.count
        pending.append(WireMessage(.push, bytes))
    }

    func finish() {
        pending.append(WireMessage(.finish))
    }

    func next() throws -> ImageDecodingEvent {
        if let result { return .final(result) }
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    private func step() throws(ImageCodecError) -> ImageDecodingEvent {
        let helper = try checkedOutHelper()
        do {
            if !started {
                if let reuse = helper.buffers.reuseMessage() { try helper.send(reuse) }
                let request = IsolatedDecodeRequest(context: context, limits: pool.configuration.limits, wantsPreviews: wantsPreviews)
                try helper.send(WireMessage(.start, request.encoded()))
                started = true
            }
            for message in pending { try helper.send(message) }
            pending.removeAll()
            try helper.send(WireMessage(.next))
            let deadline = nukeiso_now_ms() + Int64(pool.configuration.limits.wallTime.components.seconds * 1000)
                + Int64(pool.configuration.limits.wallTime.components.attoseconds / 1_000_000_000_000_000)
            let reply = try helper.receive(deadline: deadline)
            switch reply.kind {
            case .needsMoreData:
                return .needsMoreData
            case .header:
                return .header(try ImageHeader(decoding: reply.payload))
            case .preview, .final:
                var reader = WireReader(reply.payload)
                guard let description = try reader.bytes() else { throw WireReader.Malformed() }
                let image = try WireImage(decoding: description)
                let id = try reader.int(), capacity = try reader.int()
                let fd = try reader.bool() ? try helper.receiveDescriptor(deadline: deadline) : nil
                let container = try map(image, buffer: id, capacity: capacity, fd: fd, helper: helper)
                if reply.kind == .preview { return .preview(container) }
                finishDecode(helper)
                result = container
                return .final(container)
            case .failure:
                finishDecode(helper)
                var error = try ImageCodecError(decoding: reply.payload)
                error.codec = error.codec.map { "\($0), isolated" } ?? codecName
                throw error
            default:
                throw HelperProcess.Failure(kind: .io, reason: "an unexpected \(reply.kind) message")
            }
        } catch let failure as HelperProcess.Failure {
            throw helperFailed(helper, failure)
        } catch let malformed as WireReader.Malformed {
            _ = malformed
            throw helperFailed(helper, HelperProcess.Failure(kind: .io, reason: "a malformed message"))
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName, message: "\(error)")
        }
    }

    private func checkedOutHelper() throws(ImageCodecError) -> HelperProcess {
        if let helper { return helper }
        let helper = try pool.checkOut()
        self.helper = helper
        return helper
    }

    /// Tells the helper the decode is over and gives it back to the pool.
    private func finishDecode(_ helper: HelperProcess) {
        self.helper = nil
        do {
            try helper.send(WireMessage(.end))
            pool.checkIn(helper)
        } catch {
            helper.kill()
            pool.discard(helper)
        }
    }

    /// The helper's shared memory as the image's pixel storage.
    private func map(_ image: WireImage, buffer id: Int, capacity: Int, fd: Int32?, helper: HelperProcess) throws -> ImageContainer {
        do {
            return image.container(storage: try helper.buffers.adopt(id: id, capacity: capacity, byteCount: image.byteCount, descriptor: fd))
        } catch {
            throw HelperProcess.Failure(kind: .io, reason: "the helper's image could not be mapped: \(error.reason)")
        }
    }

    /// The error for a helper that stopped answering: how it ended, reaped.
    private func helperFailed(_ helper: HelperProcess, _ failure: HelperProcess.Failure) -> ImageCodecError {
        self.helper = nil
        let limits = pool.configuration.limits
        let exit: nukeiso_exit
        let timedOut = failure.kind == .timedOut
        exit = timedOut ? helper.kill() : helper.reapAfterClose()
        pool.discard(helper)
        let format = context.type?.name ?? "image"
        let input = "\(bytesPushed)-byte \(format) input"
        func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
            ImageCodecError(code, stage: .decoding, format: context.type, codec: codecName, message: message)
        }
        if timedOut {
            return error(.timedOut, "the isolated decoder gave no answer within \(limits.wallTime) on a \(input); its helper (pid \(helper.pid)) was killed")
        }
        switch exit.kind {
        case 2:
            let signal = String(cString: nukeiso_signal_name(exit.value))
            if exit.value == SIGXCPU {
                let cpu = limits.cpuTime.map { "\($0)" } ?? "its"
                return error(.limitExceeded, "the isolated decoder used up its CPU time limit (\(cpu)) on a \(input); its helper was killed (\(signal))")
            }
            var message = "the isolated decoder crashed with \(signal) on a \(input); the host is unaffected"
            if exit.value == SIGKILL { message = "the isolated decoder's helper was killed (SIGKILL) during a decode of a \(input)" }
            if let space = limits.addressSpace, [SIGABRT, SIGTRAP].contains(exit.value) {
                message += " (it may have run out of its \(space >> 20) MiB address space)"
            }
            return error(.crashed, message)
        case 1 where exit.value >= 100:
            let call = nukeiso_blocked_call_name(exit.value - 100).map { String(cString: $0) } ?? "a forbidden system call"
            return error(.sandboxViolation, "the isolated decoder tried to call \(call) on a \(input); the sandbox ended its helper")
        case 1:
            return error(.crashed, "the isolated decoder's helper exited with status \(exit.value) during a decode of a \(input) (\(failure.reason))")
        default:
            return error(.crashed, "the isolated decoder's helper stopped answering on a \(input): \(failure.reason)")
        }
    }
}
