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
import Synchronization

/// The helper's side: decodes what the host sends, with the codecs linked into this program.
///
/// Started with ``IsolationHelperExecutable/helperModeFlag``, it warms the registry and the codec
/// libraries up, installs the sandbox, says it is ready, then serves one decode after another on
/// file descriptor 3 until the host closes it.
enum IsolationHelper {
    static let socket: Int32 = 3

    static func run(sandboxed: Bool) -> Never {
        prepare(sandboxed: sandboxed)
        becomeHelper(sandboxed: sandboxed)
    }

    /// Zygote mode: warms up like a helper, but installs no sandbox and decodes nothing. It
    /// answers the host's `.fork` (a socket attached: the copy serves decodes on it, sandboxed)
    /// and `.wait` (how a copy ended: the copies are this process's children, so only it can
    /// reap them) until the host closes the socket.
    static func runZygote(sandboxed: Bool) -> Never {
        prepare(sandboxed: sandboxed)
        var ready = WireWriter()
        ready.int(Int(nukeiso_thread_count()))
        guard send(WireMessage(.ready, ready.data)) else { exit(0) }
        while let message = receive() {
            var answer = WireWriter()
            switch message.kind {
            case .fork:
                let fd = nukeiso_recv_fd(socket, -1)
                guard fd >= 0 else { exit(0) }
                let pid = nukeiso_fork_helper(fd)
                if pid == 0 { becomeHelper(sandboxed: sandboxed) }
                answer.int(Int(pid))
                guard send(WireMessage(.forked, answer.data)) else { exit(0) }
            case .wait:
                var reader = WireReader(message.payload)
                guard let pid = try? reader.int(), let block = try? reader.bool() else { exit(0) }
                var ended = nukeiso_exit()
                answer.int(Int(nukeiso_wait(Int32(truncatingIfNeeded: pid), block ? 1 : 0, &ended)))
                answer.int(Int(ended.kind))
                answer.int(Int(ended.value))
                guard send(WireMessage(.waited, answer.data)) else { exit(0) }
            default:
                exit(0)
            }
        }
        exit(0)
    }

    /// What helpers and zygotes do first: read the host's warm-up samples and decode them.
    private static func prepare(sandboxed: Bool) {
        // glib stamps its log lines with the local time: without TZ it reads /etc/localtime.
        setenv("TZ", "UTC0", 1)
        // The host's first message: tiny files it encoded, to decode here.
        var samples: [ImageType: Data] = [:]
        var formats: Set<ImageType>?
        if let message = receive(), message.kind == .warmUp {
            (samples, formats) = WarmUpSamples.decode(message.payload)
        }
        warmUp(sandboxed: sandboxed, samples: samples, formats: formats)
    }

    /// Installs the sandbox, says ready and serves decodes on file descriptor 3 until the host
    /// closes it.
    private static func becomeHelper(sandboxed: Bool) -> Never {
        var note = ""
        var isSandboxed = false
        if sandboxed {
            var landlock: Int32 = 0
            let result = nukeiso_enter_sandbox(&landlock)
            if result == 0 {
                isSandboxed = true
                note = landlock != 0 ? "files: Landlock, fonts and locale data read-only"
                    : "files: none (no Landlock in this kernel; text renders only with fonts opened at start)"
            } else {
                note = "seccomp refused: \(String(cString: strerror(-result)))"
            }
        } else {
            note = "turned off by the host's configuration"
        }
        // A helper stuck in a decode would outlive a host that died; this thread (started inside
        // the sandbox, so it is confined too) ends it. A zygote's copy watches the zygote, which
        // ends when the host does.
        _ = nukeiso_watch_parent()
        var ready = WireWriter()
        ready.bool(isSandboxed)
        ready.string(note)
        guard send(WireMessage(.ready, ready.data)) else { exit(0) }
        serve()
        exit(0)
    }

    /// Everything that reads files lazily, done before the sandbox forbids opening them: the
    /// registry's discovery, each codec's first decode (tables, plugins), the locale.
    ///
    /// The files decoded are the host's `samples` where it sent one: encoding a sample here would
    /// start encoders a helper never uses (x265 and aom alone take about 20 ms).
    ///
    /// `formats` are the formats to prepare (`nil`: every registered one).
    private static func warmUp(sandboxed: Bool, samples: [ImageType: Data], formats: Set<ImageType>?) {
        let registry = ImageDecoderRegistry.shared
        let prepared = registry.registeredFormats.filter { formats?.contains($0) ?? true }
        // Codec libraries opened on first use (libheif, librsvg, libavcodec) are opened now, while
        // their files may still be read: a library's version is read from the library, so reading
        // a codec's loads it, whether or not a sample below reaches its decoder.
        for codec in registry.registeredCodecs where prepared.contains(codec.type) { _ = codec.libraryVersion }
        for type in prepared {
            if let encoded = samples[type] ?? WarmUpSamples.make(for: [type])[type] {
                _ = try? registry.decode(encoded)
            }
        }
        // SVG has no encoder. With Landlock, fonts and fontconfig's files stay readable in the
        // sandbox: a shape starts librsvg, glib and cairo, and fontconfig loads on the first text,
        // as it would in process (about 45 ms that a helper start need not pay). Without Landlock
        // no file can be opened afterwards: render text in the default and generic families now,
        // so that fontconfig reads its configuration and opens the fonts they resolve to.
        if prepared.contains(.svg), sandboxed, nukeiso_landlock_abi() > 0 {
            _ = try? registry.decode(Data("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"2\" height=\"2\"><rect width=\"1\" height=\"2\" fill=\"#08f\"/></svg>".utf8))
        } else if prepared.contains(.svg) {
            let families = ["", "serif", "sans-serif", "monospace"]
            var texts = ""
            for (index, family) in families.enumerated() {
                let attribute = family.isEmpty ? "" : " font-family=\"\(family)\""
                for style in ["", " font-weight=\"bold\"", " font-style=\"italic\"", " font-weight=\"bold\" font-style=\"italic\""] {
                    texts += "<text x=\"0\" y=\"\(12 * (index + 1))\"\(attribute)\(style)>Ag\u{E9}</text>"
                }
            }
            let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"200\">\(texts)</svg>"
            _ = try? registry.decode(Data(svg.utf8))
        }
        _ = String(describing: 1.5)
    }

    // MARK: - Serving

    private static func serve() {
        var request: IsolatedDecodeRequest?
        var decoder: (any IncrementalImageDecoding)?
        var codec: ImageCodecInfo?
        var failure: ImageCodecError?
        // The final image's animation, and the frame decoder serving `.frame` requests from it.
        var animation: ImageAnimation?
        var frames: (any AnimationFrameDecoding)?
        while let message = receive() {
            switch message.kind {
            case .start:
                request = try? IsolatedDecodeRequest(decoding: message.payload)
                decoder = nil
                codec = nil
                failure = request == nil ? ImageCodecError(.internalFailure, stage: .registry, codec: "NukeIsolation", message: "a malformed request") : nil
                if let request { applyLimits(request) }
            case .reuse:
                var reader = WireReader(message.payload)
                func ids() -> [Int] {
                    guard let count = try? reader.int(), count >= 0, count <= message.payload.count / 8 else { return [] }
                    return (0..<count).compactMap { _ in try? reader.int() }
                }
                let released = ids()
                SharedMemoryAllocator.update(released: released, forgotten: ids())
            case .push:
                guard failure == nil, let request else { continue }
                if decoder == nil {
                    let context = request.context(data: message.payload, allocator: SharedMemoryAllocator.allocator)
                    if let (made, info) = ImageDecoderRegistry.shared.incrementalDecoder(for: context) {
                        var made = made
                        made.setWantsPreviews(request.wantsPreviews)
                        decoder = made
                        codec = info
                    } else {
                        let type = context.type?.name ?? "data"
                        failure = ImageCodecError(.noCodec, stage: .registry, format: context.type,
                                                  message: "the helper has no decoder for \(type): it must link the same codec products as the host")
                        continue
                    }
                }
                decoder?.push(message.payload)
            case .finish:
                if decoder == nil, failure == nil {
                    // No byte was pushed: nothing to sniff or decode, as in process.
                    failure = ImageCodecError(.noCodec, stage: .registry, message: "the input is empty; there is no image to decode")
                }
                decoder?.finish()
            case .next:
                if let failure {
                    guard send(WireMessage(.failure, failure.encoded())) else { return }
                    continue
                }
                guard var current = decoder else {
                    guard send(WireMessage(.needsMoreData)) else { return }
                    continue
                }
                do {
                    let event = try current.next()
                    decoder = current
                    if case .final(let container) = event { animation = container.animation }
                    guard reply(event) else { return }
                } catch {
                    let wrapped = (error as? ImageCodecError)
                        ?? ImageCodecError(.decoderFailed, stage: .decoding, format: nil,
                                           codec: codec?.codecDescription, message: String(describing: error))
                    failure = wrapped
                    decoder = nil
                    guard send(WireMessage(.failure, wrapped.encoded())) else { return }
                }
            case .frame:
                var reader = WireReader(message.payload)
                guard let index = try? reader.int(), let reset = try? reader.bool() else { return }
                do throws(ImageCodecError) {
                    guard let animation, animation.frameInfos.indices.contains(index) else {
                        throw ImageCodecError(.internalFailure, stage: .decoding, codec: "NukeIsolation",
                                              message: "frame \(index) was asked of a decode without such a frame")
                    }
                    // Each frame gets the CPU time of a decode.
                    if let request { applyLimits(request) }
                    if frames == nil {
                        frames = try animation.makeFrameDecoder()
                    } else if reset {
                        try frames?.reset()
                    }
                    guard let bitmap = try frames?.decodeFrame(at: index) else { continue }
                    guard sendImage(ImageContainer(image: Image(bitmap: bitmap), type: animation.type), kind: .final, shareStorage: false) else { return }
                } catch {
                    guard send(WireMessage(.failure, error.encoded())) else { return }
                }
            case .end:
                animation = nil
                frames = nil
                request = nil
                decoder = nil
                codec = nil
                failure = nil
                SharedMemoryAllocator.dropUnshared()
                _ = nukeiso_set_limits(0, 0)
            default:
                return
            }
        }
    }

    /// The decode's CPU time from now, and its address space on top of the buffers kept for reuse
    /// (they are mapped already).
    private static func applyLimits(_ request: IsolatedDecodeRequest) {
        let space = request.addressSpace > 0 ? request.addressSpace + SharedMemoryAllocator.mappedBytes : 0
        _ = nukeiso_set_limits(UInt64(space), UInt64(max(0, request.cpuSeconds)))
    }

    private static func reply(_ event: ImageDecodingEvent) -> Bool {
        switch event {
        case .needsMoreData:
            return send(WireMessage(.needsMoreData))
        case .header(let header):
            return send(WireMessage(.header, header.encoded()))
        case .preview(let container):
            return sendImage(container, kind: .preview, shareStorage: false)
        case .final(let container):
            return sendImage(container, kind: .final, shareStorage: true)
        }
    }

    /// Sends the image's description and the buffer holding its pixels (its descriptor too, the
    /// first time): the decoder's own buffer for the final image, a copy otherwise (a preview,
    /// whose memory the decoder goes on writing).
    private static func sendImage(_ container: ImageContainer, kind: WireMessage.Kind, shareStorage: Bool) -> Bool {
        let bitmap = container.image.bitmap
        let image = WireImage(container: container)
        var lent = shareStorage ? bitmap.withUnsafeBytes { SharedMemoryAllocator.lend($0.baseAddress) } : nil
        var copy: PixelStorage?
        if lent == nil {
            guard let storage = try? SharedMemoryAllocator.allocator.allocate(byteCount: image.byteCount) else {
                let error = ImageCodecError(.internalFailure, stage: .decoding, format: container.type, codec: "NukeIsolation",
                                            message: "the helper cannot make \(image.byteCount) bytes of shared memory")
                return send(WireMessage(.failure, error.encoded()))
            }
            // The allocator's own memory, not yet seen by anyone: writing it through the address is sound.
            let target = storage.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
            bitmap.withUnsafeBytes { source in
                if let base = source.baseAddress, let target, source.count > 0 {
                    target.copyMemory(from: base, byteCount: min(source.count, image.byteCount))
                }
            }
            lent = SharedMemoryAllocator.lend(target)
            copy = storage
        }
        defer { _ = copy }
        guard let lent else { return false }
        var writer = WireWriter()
        writer.bytes(image.encoded())
        writer.int(lent.id)
        writer.int(lent.capacity)
        writer.bool(lent.fd != nil)
        guard send(WireMessage(kind, writer.data)) else { return false }
        if let fd = lent.fd { return nukeiso_send_fd(socket, fd) == 0 }
        return true
    }

    // MARK: - Messages

    private static func send(_ message: WireMessage) -> Bool {
        message.framed.withUnsafeBytes { nukeiso_write_all(socket, $0.baseAddress!, $0.count) } == 0
    }

    private static func receive() -> WireMessage? {
        var header = [UInt8](repeating: 0, count: 5)
        guard header.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, 5, -1) }) == 0,
              let kind = WireMessage.Kind(rawValue: header[0]) else { return nil }
        let length = Int(UInt32(header[1]) | UInt32(header[2]) << 8 | UInt32(header[3]) << 16 | UInt32(header[4]) << 24)
        var payload = Data(count: length)
        if length > 0 {
            guard payload.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, length, -1) }) == 0 else { return nil }
        }
        return WireMessage(kind, payload)
    }
}

/// Pixel memory in the helper: memfd buffers that the host maps too (``HelperBuffers`` is its
/// side), kept from one decode to the next.
///
/// A buffer is free when no bitmap here uses it and the host has released it. The allocator
/// hands out the smallest free buffer that fits (and is not more than twice the request), else a
/// new one. Buffers the host never saw are unmapped when the decode ends; the host says when to
/// unmap the others.
enum SharedMemoryAllocator {
    private struct Buffer {
        var fd: Int32
        var address: UInt
        var capacity: Int
        var isHeldHere = true
        var isHeldByHost = false
        var hostHasDescriptor = false
        var isForgotten = false
        var isFree: Bool { !isHeldHere && !isHeldByHost }
    }

    private struct State {
        var buffers: [Int: Buffer] = [:]
        var nextID = 1
    }

    private static let state = Mutex(State())

    static let allocator = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
        let reused: (Int, UInt)? = state.withLock { state in
            let fitting = state.buffers.filter {
                $0.value.isFree && !$0.value.isForgotten && $0.value.capacity >= byteCount && $0.value.capacity <= 2 * byteCount + 65536
            }
            guard let (id, _) = fitting.min(by: { $0.value.capacity < $1.value.capacity }) else { return nil }
            state.buffers[id]?.isHeldHere = true
            return (id, state.buffers[id]!.address)
        }
        if let (id, address) = reused {
            let pointer = UnsafeMutableRawPointer(bitPattern: address)!
            if zeroed { memset(pointer, 0, byteCount) }
            return storage(id: id, address: pointer, byteCount: byteCount)
        }
        // memfd memory starts zeroed, so `zeroed` costs nothing.
        let fd = nukeiso_memfd(byteCount)
        guard fd >= 0, let address = nukeiso_map(fd, byteCount, 1) else {
            if fd >= 0 { nukeiso_close(fd) }
            throw ImageCodecError(.internalFailure, stage: .decoding, codec: "NukeIsolation",
                                  message: "the helper cannot allocate \(byteCount) bytes of shared memory")
        }
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.buffers[state.nextID] = Buffer(fd: fd, address: UInt(bitPattern: address), capacity: max(byteCount, 1))
            return state.nextID
        }
        return storage(id: id, address: address, byteCount: byteCount)
    }

    private static func storage(id: Int, address: UnsafeMutableRawPointer, byteCount: Int) -> PixelStorage {
        PixelStorage(adopting: address, byteCount: byteCount) { _ in
            let gone = state.withLock { state -> Buffer? in
                state.buffers[id]?.isHeldHere = false
                guard let buffer = state.buffers[id], buffer.isFree, buffer.isForgotten else { return nil }
                state.buffers[id] = nil
                return buffer
            }
            gone.map(destroy)
        }
    }

    private static func destroy(_ buffer: Buffer) {
        nukeiso_unmap(UnsafeMutableRawPointer(bitPattern: buffer.address), buffer.capacity)
        nukeiso_close(buffer.fd)
    }

    /// What the host needs to map the buffer starting at `address`, now lent to it; `nil` when
    /// the address is not one of ours or the host holds that buffer already. `fd` is `nil` when
    /// the host mapped this buffer before.
    static func lend(_ address: UnsafeRawPointer?) -> (id: Int, capacity: Int, fd: Int32?)? {
        guard let address else { return nil }
        return state.withLock { state in
            guard let (id, buffer) = state.buffers.first(where: { $0.value.address == UInt(bitPattern: address) }),
                  !buffer.isHeldByHost else { return nil }
            state.buffers[id]?.isHeldByHost = true
            state.buffers[id]?.hostHasDescriptor = true
            return (id, buffer.capacity, buffer.hostHasDescriptor ? nil : buffer.fd)
        }
    }

    /// The host gave buffers back (`released`: free to reuse) or unmapped them (`forgotten`).
    static func update(released: [Int], forgotten: [Int]) {
        let gone: [Buffer] = state.withLock { state in
            for id in released { state.buffers[id]?.isHeldByHost = false }
            var gone: [Buffer] = []
            for id in forgotten {
                guard var buffer = state.buffers[id] else { continue }
                buffer.isHeldByHost = false
                buffer.isForgotten = true
                state.buffers[id] = buffer
                if buffer.isFree {
                    state.buffers[id] = nil
                    gone.append(buffer)
                }
            }
            return gone
        }
        gone.forEach(destroy)
    }

    /// A decode ended: free buffers the host never saw are unmapped.
    static func dropUnshared() {
        let gone: [Buffer] = state.withLock { state in
            let unshared = state.buffers.filter { $0.value.isFree && !$0.value.hostHasDescriptor }
            for id in unshared.keys { state.buffers[id] = nil }
            return Array(unshared.values)
        }
        gone.forEach(destroy)
    }

    /// The bytes of every buffer mapped here.
    static var mappedBytes: Int {
        state.withLock { $0.buffers.values.reduce(0) { $0 + $1.capacity } }
    }
}
