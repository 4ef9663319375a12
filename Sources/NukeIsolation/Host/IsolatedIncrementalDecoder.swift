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
import NukePixels

/// An ``NukeCore/IncrementalImageDecoding`` whose work happens in a helper process.
///
/// Pushed bytes are forwarded to the helper as they come; each ``next()`` asks it for the next
/// event. ``IsolationLimits/wallTime`` is one budget for the whole decode: the time spent
/// waiting for the helper adds up over every answer, previews and animation frames included. The helper's decoder writes into shared
/// memory this process lends it (``SharedPixelBuffers``), which becomes the image's
/// ``NukeCore/PixelStorage``: no copy for the final image, one in the helper for a preview, whose
/// memory the decoder goes on writing. Nothing a
/// helper sends is taken on trust: every message is bounded by its kind and the decode's
/// ``NukeCore/ImageLimits`` before anything is allocated for it. If the helper dies, hangs, breaks
/// its sandbox or sends what no honest helper sends, the decode throws an
/// ``NukeCore/ImageCodecError`` saying what happened; the helper is killed and reaped, and the pool
/// starts another.
final class IsolatedIncrementalDecoder: IncrementalImageDecoding {
    private let pool: HelperPool
    private let context: ImageDecodingContext
    /// The codec name the host's own errors carry. Read only when needed: it holds the C
    /// library's version, and reading that would load in the host a library (libheif, librsvg)
    /// that only the helper needs.
    private let readCodecName: @Sendable () -> String
    private var codecName: String { readCodecName() }
    private var helper: HelperProcess?
    private var wantsPreviews = true
    private var started = false
    private var bytesPushed = 0
    private var failure: ImageCodecError?
    private var result: ImageContainer?
    private var pending: [WireMessage] = []
    /// Every byte pushed, for an animation's frames (decoded again in a helper on demand).
    private var input = Data()
    /// Keeps the helper after the final image, to serve ``frame(at:reset:)``.
    private let servesFrames: Bool
    /// The final image's animation, as the helper described it.
    private var receivedAnimation: WireAnimation?

    /// The host's own reading of the input's header (the format's hook; never the helper's
    /// word), which bounds the pixel memory the helper may borrow: ``pixelBudget``.
    private let readHeader: @Sendable (Data) -> ImageHeader.ParseResult
    /// The bytes of the image the header declares (8 a pixel past 8 bits a sample, else 4), read
    /// when the helper first asks for memory; `nil` when the host cannot read the header.
    private lazy var declaredBytes: Int? = {
        guard case .parsed(let header) = readHeader(input) else { return nil }
        return header.declaredImageBytes
    }()
    /// The bytes of the images the helper handed back in this decode (previews, frames).
    private var deliveredBytes = 0

    /// Whether the helper's decoder consumes input as it arrives (a progressive codec), so that
    /// a large push goes over in slices and the helper holds a slice rather than the whole input.
    private let streamsInput: Bool

    /// The size of the slices a large push goes over in, when the decoder consumes its input as
    /// it arrives.
    static let sliceBytes = 256 << 10

    init(pool: HelperPool, context: ImageDecodingContext, codecName: @autoclosure @escaping @Sendable () -> String, servesFrames: Bool = false,
         streamsInput: Bool = false, readHeader: @escaping @Sendable (Data) -> ImageHeader.ParseResult) {
        self.pool = pool
        self.context = context
        self.readCodecName = codecName
        self.readHeader = readHeader
        self.servesFrames = servesFrames
        self.streamsInput = streamsInput
    }

    deinit {
        guard let helper else { return }
        if servesFrames, result != nil, failure == nil {
            // Between frame requests: the helper is idle and can serve others.
            finishDecode(helper)
        } else {
            // Abandoned mid-decode: the helper may still be working on it, so it cannot be reused.
            helper.kill()
            pool.discard(helper)
        }
    }

    func setWantsPreviews(_ wantsPreviews: Bool) { self.wantsPreviews = wantsPreviews }

    func push(_ bytes: Data) {
        bytesPushed += bytes.count
        if input.isEmpty { input = bytes } else { input.append(bytes) }
        guard streamsInput, bytes.count > 4 * Self.sliceBytes else {
            pending.append(WireMessage(.push, bytes))
            return
        }
        for start in stride(from: bytes.startIndex, to: bytes.endIndex, by: Self.sliceBytes) {
            pending.append(WireMessage(.push, bytes[start..<min(start + Self.sliceBytes, bytes.endIndex)]))
        }
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
                let request = IsolatedDecodeRequest(context: context, limits: pool.configuration.limits, wantsPreviews: wantsPreviews,
                                                    servesFrames: servesFrames)
                try helper.send(WireMessage(.start, request.encoded()))
                started = true
            }
            // One slice of a large push per answer: the helper's decoder consumes it before the
            // next arrives. Whatever else is pending goes with it. The wall time holds for them all.
            let (deadline, startedAt) = nextDeadline()
            defer { spend(since: startedAt) }
            var reply: WireMessage
            repeat {
                var sent = 0
                while sent < pending.count {
                    try helper.send(pending[sent])
                    sent += 1
                    if pending[sent - 1].kind == .push, sent < pending.count, pending[sent].kind == .push { break }
                }
                pending.removeFirst(sent)
                try helper.send(WireMessage(.next))
                reply = try answer(from: helper, deadline: deadline)
            } while reply.kind == .needsMoreData && !pending.isEmpty
            switch reply.kind {
            case .needsMoreData:
                return .needsMoreData
            case .header:
                let header = try ImageHeader(decoding: reply.payload, limits: context.limits, expected: context.type)
                return .header(header)
            case .preview, .final:
                var container = try receiveImage(reply, helper: helper, deadline: deadline)
                if reply.kind == .preview { return .preview(container) }
                if !servesFrames { finishDecode(helper) }
                container.animation = receivedAnimation.map(animation)
                receivedAnimation = nil
                result = container
                return .final(container)
            case .failure:
                finishDecode(helper)
                throw try decoderError(reply, helper: helper)
            default:
                throw HelperProcess.Failure(kind: .violation, reason: "an unexpected \(reply.kind) message")
            }
        } catch let failure as HelperProcess.Failure {
            throw helperFailed(helper, failure)
        } catch let malformed as WireReader.Malformed {
            throw helperFailed(helper, HelperProcess.Failure(kind: .violation, reason: malformed.reason))
        } catch is Cancelled {
            throw cancelled(helper)
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName, message: "\(error)")
        }
    }

    /// The wall time for the whole decode: the pool's. A vector document's render time is CPU
    /// time, which the helper sets as its RLIMIT_CPU: time spent waiting for a processor on a
    /// busy machine is not the document's fault, so it does not shorten the wall time.
    private var wallTime: Duration {
        pool.configuration.limits.wallTime
    }

    /// Milliseconds spent waiting for the helper so far, over every answer.
    private var spentMilliseconds: Int64 = 0

    /// The deadline for the next answer: what is left of the decode's wall time.
    private func nextDeadline() -> (deadline: Int64, startedAt: Int64) {
        let now = nukeiso_now_ms()
        return (now + max(0, Self.milliseconds(wallTime) - spentMilliseconds), now)
    }

    private func spend(since startedAt: Int64) {
        spentMilliseconds += max(0, nukeiso_now_ms() - startedAt)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        Int64(duration.components.seconds * 1000) + Int64(duration.components.attoseconds / 1_000_000_000_000_000)
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

    /// The host's side of an animation decoded in a helper: the core composites here the frames
    /// that an ``IsolatedFrameDecoder`` brings from a helper, one request per frame.
    private func animation(_ wire: WireAnimation) -> ImageAnimation {
        let (pool, input, codecName, readHeader) = (self.pool, self.input, self.codecName, self.readHeader)
        var whole = self.context
        whole.data = input
        whole.isCompleted = true
        let context = whole
        let infos = wire.frameInfos
        return ImageAnimation(canvasSize: wire.canvasSize, loopCount: wire.loopCount, frameInfos: infos,
                              backgroundColor: wire.backgroundColor, type: context.type, codec: codecName) {
            IsolatedFrameDecoder(pool: pool, context: context, codecName: codecName, frameInfos: infos, readHeader: readHeader)
        }
    }

    /// Decodes frame `index`'s rectangle in the helper kept after the final image
    /// (`servesFrames`), after resetting its frame decoder when `reset` is set.
    /// The frame must be `expected`'s size, in straight RGBA: what the compositor draws.
    func frame(at index: Int, reset: Bool, expected: AnimationFrameInfo) throws(ImageCodecError) -> Bitmap {
        guard servesFrames, result != nil, let helper else {
            throw failure ?? ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName,
                                              message: "no helper holds this animation")
        }
        do {
            var writer = WireWriter()
            writer.int(index)
            writer.bool(reset)
            try helper.send(WireMessage(.frame, writer.data))
            let (deadline, startedAt) = nextDeadline()
            defer { spend(since: startedAt) }
            let reply = try answer(from: helper, deadline: deadline)
            switch reply.kind {
            case .final:
                let bitmap = try receiveImage(reply, helper: helper, deadline: deadline).image.bitmap
                // The compositor draws a frame of exactly its rectangle's size, in straight RGBA.
                guard bitmap.width == expected.width, bitmap.height == expected.height,
                      bitmap.pixelFormat == .rgba8, bitmap.alphaMode != .premultiplied else {
                    throw HelperProcess.Failure(kind: .violation, reason: "a \(bitmap.width) × \(bitmap.height) \(bitmap.pixelFormat) frame \(index), not its rectangle's")
                }
                return bitmap
            case .failure:
                throw try decoderError(reply, helper: helper)
            default:
                throw HelperProcess.Failure(kind: .violation, reason: "an unexpected \(reply.kind) message")
            }
        } catch let failure as HelperProcess.Failure {
            let error = helperFailed(helper, failure)
            self.failure = error
            throw error
        } catch let malformed as WireReader.Malformed {
            let error = helperFailed(helper, HelperProcess.Failure(kind: .violation, reason: malformed.reason))
            self.failure = error
            throw error
        } catch is Cancelled {
            let error = cancelled(helper)
            self.failure = error
            throw error
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName, message: "\(error)")
        }
    }

    /// The helper's answer to a request, lending it the pixel memory its decoder asks for on the
    /// way: each request is checked against the decode's limits first.
    private func answer(from helper: HelperProcess, deadline: Int64) throws -> WireMessage {
        let bounds = WireBounds(context.limits)
        while true {
            try waitForAnswer(from: helper, deadline: deadline)
            let message = try helper.receive(deadline: deadline) { bounds.maximumPayload($0) }
            guard message.kind == .allocate else { return message }
            var reader = WireReader(message.payload)
            let byteCount = try reader.int()
            do {
                let lent = try pool.buffers.lend(byteCount: byteCount, to: helper.lease, limit: pixelBudget())
                var writer = WireWriter()
                writer.int(lent.id)
                writer.int(lent.capacity)
                try helper.send(WireMessage(.buffer, writer.data))
                guard nukeiso_send_fd(helper.socket, lent.fd) == 0 else {
                    throw HelperProcess.Failure(kind: .closed, reason: "the helper closed its socket")
                }
            } catch let refused as SharedPixelBuffers.Refused {
                throw HelperProcess.Failure(kind: .violation, reason: refused.reason)
            }
        }
    }

    /// The most pixel memory the helper may have borrowed so far in this decode:
    /// ``pixelBudget(limits:declaredBytes:deliveredBytes:)`` with the header the host reads.
    private func pixelBudget() -> Int {
        Self.pixelBudget(limits: context.limits, declaredBytes: declaredBytes, deliveredBytes: deliveredBytes)
    }

    /// One budget for all the buffers a helper borrows in a decode (image, scratch, previews,
    /// frames): 1.2 × the decode's byte limit and, when the host read the header, four images of
    /// the declared size (`declaredBytes`: 8 bytes a pixel past 8 bits a sample, else 4) and 1 MiB
    /// beyond the images it has handed back (`deliveredBytes`). Over the corpora and fixtures,
    /// decoded whole and to 100 px in helpers, no honest decode had more than two declared images
    /// borrowed beyond those it handed back. A 3 KB PNG declaring 16 × 16 gets 1 MiB and a bit,
    /// however its helper asks.
    static func pixelBudget(limits: ImageLimits, declaredBytes: Int?, deliveredBytes: Int) -> Int {
        let limit = limits.maxDecodedBytes
        let (whole, overflow) = limit.addingReportingOverflow(limit / 5)
        let ceiling = overflow ? Int.max : whole
        guard let declaredBytes else { return ceiling }
        let (images, imagesOverflow) = declaredBytes.multipliedReportingOverflow(by: declaredImages)
        return min(ceiling, imagesOverflow ? Int.max : saturatingSum(saturatingSum(images, 1 << 20), deliveredBytes))
    }

    /// How many images of the declared size a decode's buffers may add up to (a decode, a colour
    /// conversion, a resampled copy, a preview).
    static let declaredImages = 4

    private static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// The decoder's failure, as the helper reported it: its code and stage (by their rules) in
    /// the host's words; the helper's own text goes to the configuration's log only.
    private func decoderError(_ reply: WireMessage, helper: HelperProcess) throws(WireReader.Malformed) -> ImageCodecError {
        var text = ""
        var error = try ImageCodecError(decoding: reply.payload, expected: context.type, codec: codecName, helperText: &text)
        let escaped = WireRules.escaped(text)
        pool.configuration.helperTextLog.write("helper \(helper.pid) (\(codecName)) reported \(error.code.rawValue): \(escaped)")
        if pool.configuration.forwardsHelperText { error.message += ": \(escaped)" }
        return error
    }

    /// Waits for the helper to answer, a tenth of a second at a time: a decode cancelled meanwhile
    /// (its token, or its task) kills the helper and throws `.cancelled` at once.
    private func waitForAnswer(from helper: HelperProcess, deadline: Int64) throws {
        while true {
            if context.isCancelled { throw Cancelled() }
            let ready = nukeiso_wait_readable(helper.socket, min(deadline, nukeiso_now_ms() + 100))
            if ready == 0 || ready < 0 || nukeiso_now_ms() >= deadline { return }
        }
    }

    /// The caller cancelled while the helper worked.
    struct Cancelled: Error {}

    /// An image message, checked against the decode's limits, over the buffer it names.
    private func receiveImage(_ reply: WireMessage, helper: HelperProcess, deadline: Int64) throws -> ImageContainer {
        var reader = WireReader(reply.payload)
        guard let description = try reader.bytes() else { throw WireReader.Malformed("an image without a description") }
        let image = try WireImage(decoding: description, limits: context.limits, expected: context.type)
        let id = try reader.int()
        let storage: PixelStorage
        do {
            storage = try pool.buffers.adopt(id: id, byteCount: image.byteCount, lease: helper.lease)
        } catch {
            throw HelperProcess.Failure(kind: .violation, reason: error.reason)
        }
        deliveredBytes = Self.saturatingSum(deliveredBytes, image.byteCount)
        if reply.kind == .final, let wire = image.animation {
            receivedAnimation = wire
        }
        return image.container(storage: storage)
    }

    /// Kills the helper of a cancelled decode (it may be deep in a C library) and says so.
    private func cancelled(_ helper: HelperProcess) -> ImageCodecError {
        self.helper = nil
        helper.kill()
        pool.discard(helper)
        return ImageCodecError(.cancelled, stage: .decoding, format: context.type, codec: codecName,
                               message: "cancelled; the helper decoding it was stopped")
    }

    /// The error for a helper that stopped answering: how it ended, reaped.
    private func helperFailed(_ helper: HelperProcess, _ failure: HelperProcess.Failure) -> ImageCodecError {
        self.helper = nil
        let limits = pool.configuration.limits
        let exit: nukeiso_exit
        let timedOut = failure.kind == .timedOut
        // A helper that timed out or broke the protocol is killed at once; one that closed its
        // socket is given a moment to end, so that its exit says why.
        exit = timedOut || failure.kind == .violation ? helper.kill() : helper.reapAfterClose()
        pool.discard(helper)
        let format = context.type?.name ?? "image"
        let input = "\(bytesPushed)-byte \(format) input"
        func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
            ImageCodecError(code, stage: .decoding, format: context.type, codec: codecName, message: message)
        }
        if timedOut {
            return error(.timedOut, "the isolated decoder gave no answer within \(wallTime) on a \(input); its helper (pid \(helper.pid)) was killed")
        }
        if failure.kind == .violation {
            return error(.sandboxViolation, "the isolated decoder's helper sent \(failure.reason) on a \(input); it was killed")
        }
        switch exit.kind {
        case 2:
            let signal = String(cString: nukeiso_signal_name(exit.value))
            if exit.value == SIGXCPU {
                let cpu = limits.cpuTime.map { "\($0)" } ?? "its"
                return error(.limitExceeded, "the isolated decoder used up its CPU time limit (\(cpu)) on a \(input); its helper was killed (\(signal))")
            }
            if exit.value == SIGKILL {
                // Not the input's doing: killed from outside (an operator, the OOM killer) or with
                // its zygote. The same input may well decode in another helper.
                return error(.helperLost, "the isolated decoder's helper was killed (SIGKILL) during a decode of a \(input); the input may decode in another helper")
            }
            var message = "the isolated decoder crashed with \(signal) on a \(input); the host is unaffected"
            if let space = limits.addressSpace, [SIGABRT, SIGTRAP].contains(exit.value) {
                message += " (it may have run out of its \(space >> 20) MiB address space)"
            }
            return error(.crashed, message)
        case 1 where exit.value >= 100:
            let call = nukeiso_blocked_call_name(exit.value - 100).map { String(cString: $0) } ?? "a forbidden system call"
            return error(.sandboxViolation, "the isolated decoder tried to call \(call) on a \(input); the sandbox ended its helper")
        case 1 where exit.value == 99:
            return error(.sandboxViolation, "the isolated decoder made a system call outside the sandbox's allow-list on a \(input); the sandbox ended its helper")
        case 1:
            return error(.crashed, "the isolated decoder's helper exited with status \(exit.value) during a decode of a \(input) (\(failure.reason))")
        default:
            return error(.crashed, "the isolated decoder's helper stopped answering on a \(input): \(failure.reason)")
        }
    }
}

/// Decodes an animation's frames in a helper for the host's ``NukeCore/AnimationFrameSequence``.
///
/// The first frame request decodes the file again in a helper and keeps that helper, so each
/// further frame costs one request (O(1) frames of work); the helper goes back to the pool when
/// the iterator is released. A reset is sent with the next request.
final class IsolatedFrameDecoder: AnimationFrameDecoding {
    private let frameInfos: [AnimationFrameInfo]
    private let pool: HelperPool
    private let context: ImageDecodingContext
    private let codecName: String
    private let readHeader: @Sendable (Data) -> ImageHeader.ParseResult
    private var session: IsolatedIncrementalDecoder?
    private var needsReset = false

    init(pool: HelperPool, context: ImageDecodingContext, codecName: String, frameInfos: [AnimationFrameInfo],
         readHeader: @escaping @Sendable (Data) -> ImageHeader.ParseResult) {
        self.pool = pool
        self.context = context
        self.codecName = codecName
        self.frameInfos = frameInfos
        self.readHeader = readHeader
    }

    var frameCount: Int { frameInfos.count }

    func info(at index: Int) -> AnimationFrameInfo { frameInfos[index] }

    func decodeFrame(at index: Int) throws(ImageCodecError) -> Bitmap {
        let session = try openSession()
        defer { needsReset = false }
        return try session.frame(at: index, reset: needsReset, expected: frameInfos[index])
    }

    func reset() throws(ImageCodecError) {
        needsReset = true
    }

    private func openSession() throws(ImageCodecError) -> IsolatedIncrementalDecoder {
        if let session { return session }
        let name = codecName
        let session = IsolatedIncrementalDecoder(pool: pool, context: context, codecName: name, servesFrames: true, readHeader: readHeader)
        session.setWantsPreviews(false)
        if !context.data.isEmpty { session.push(context.data) }
        session.finish()
        do {
            while true {
                switch try session.next() {
                case .final: self.session = session; return session
                case .header, .preview: continue
                case .needsMoreData:
                    throw ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName,
                                          message: "the helper asked for more data after the end of the input")
                }
            }
        } catch let error as ImageCodecError {
            throw error
        } catch {
            throw ImageCodecError(.internalFailure, stage: .decoding, format: context.type, codec: codecName, message: "\(error)")
        }
    }
}
