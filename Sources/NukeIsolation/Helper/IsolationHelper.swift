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

    /// What the host asked for on the helper's command line.
    struct Options {
        var sandboxed = true
        /// Landlock where the kernel has it; `false` tests the fallback (every open refused).
        var usesLandlock = true
        /// The identity a helper started as root takes.
        var userID: UInt32 = 65534
        var groupID: UInt32 = 65534
        var niceness: Int32 = 0
        var threadLimit: Int32 = 0
        var helperThreadLimit: Int32 = 0

        init(arguments: [String]) {
            sandboxed = !arguments.contains("--no-sandbox")
            usesLandlock = !arguments.contains("--no-landlock")
            func value(_ name: String) -> UInt32? {
                guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
                return UInt32(arguments[index + 1])
            }
            userID = value("--sandbox-uid") ?? userID
            groupID = value("--sandbox-gid") ?? groupID
            niceness = value("--sandbox-nice").map { Int32(clamping: $0) } ?? 0
            threadLimit = value("--sandbox-threads").map { Int32(clamping: $0) } ?? 0
            helperThreadLimit = value("--sandbox-helper-threads").map { Int32(clamping: $0) } ?? 0
        }
    }

    static func run(_ options: Options) -> Never {
        let readable = prepare(options, rehearses: false)
        becomeHelper(options, readable: readable)
    }

    /// Zygote mode: warms up like a helper, but installs no sandbox and decodes nothing. It
    /// answers the host's `.fork` (a socket attached: the copy serves one decode on it, sandboxed)
    /// and `.wait` (how a copy ended: the copies are this process's children, so only it can
    /// reap them) until the host closes the socket.
    static func runZygote(_ options: Options) -> Never {
        // Ends with the host, even while it is forking (its copies end with it in turn).
        _ = nukeiso_die_with_parent(getppid())
        let readable = prepare(options, rehearses: true)
        var ready = WireWriter()
        ready.int(Int(nukeiso_thread_count()))
        guard send(WireMessage(.ready, ready.data)) else { exit(0) }
        while let message = receive(limit: 64) {
            var answer = WireWriter()
            switch message.kind {
            case .fork:
                let fd = nukeiso_recv_fd(socket, -1)
                guard fd >= 0 else { exit(0) }
                let pid = nukeiso_fork_helper(fd)
                if pid == 0 { becomeHelper(options, readable: readable) }
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

    /// What helpers and zygotes do first: read the host's warm-up samples and decode them (a
    /// zygote also `rehearses` a decode, which pays off once it has forked a few helpers); returns
    /// the paths the sandbox leaves readable.
    private static func prepare(_ options: Options, rehearses: Bool) -> [String] {
        // glib stamps its log lines with the local time: without TZ it reads /etc/localtime.
        setenv("TZ", "UTC0", 1)
        // The host's first message: tiny files it encoded, to decode here.
        var samples: [ImageType: Data] = [:]
        var formats: Set<ImageType>?
        if let message = receive(limit: 16 << 20), message.kind == .warmUp {
            (samples, formats) = WarmUpSamples.decode(message.payload)
        }
        // Files stay readable in the sandbox with Landlock, which confines only a process of one
        // thread (a zygote's copies always are).
        let landlock = options.usesLandlock && nukeiso_landlock_abi() > 0
        let prepared = warmUp(filesStayReadable: !options.sandboxed || landlock, samples: samples, formats: formats)
        if rehearses { rehearse(samples.filter { prepared.contains($0.key) }) }
        // Text needs fonts: fontconfig's configured folders (FONTCONFIG_FILE, an app's own) stay
        // readable, as they are in process.
        var count = 0
        let paths = nukeiso_readable_paths(prepared.contains(.svg) ? 1 : 0, &count)
        defer { nukeiso_free_paths(paths, count) }
        guard let paths else { return [] }
        return (0..<count).map { String(cString: paths[$0]) }
    }

    /// Installs the sandbox, says ready and serves one decode on file descriptor 3, then exits.
    private static func becomeHelper(_ options: Options, readable: [String]) -> Never {
        var status = SandboxStatus.off("turned off by the host's configuration")
        // The parent's pidfd, for the thread that ends this helper with it (pidfd_open is refused
        // in the sandbox).
        _ = nukeiso_open_parent()
        // The kernel ends this helper with its parent (the host, or the zygote that ends with
        // the host), even one whose threads an attacker stopped: set again after the sandbox
        // changes the identity, which clears it.
        _ = nukeiso_die_with_parent(getppid())
        if options.sandboxed {
            let strings = readable.map { strdup($0) }
            defer { strings.forEach { free($0) } }
            var report = nukeiso_sandbox_report()
            let result = strings.map { UnsafePointer($0) }.withUnsafeBufferPointer { pointers in
                var settings = nukeiso_sandbox_options(uid: options.userID, gid: options.groupID, use_landlock: options.usesLandlock ? 1 : 0,
                                                       readable: pointers.baseAddress, readable_count: pointers.count, niceness: options.niceness,
                                                       thread_limit: options.threadLimit, helper_thread_limit: options.helperThreadLimit)
                return nukeiso_enter_sandbox(&settings, &report)
            }
            if result == 0 {
                // What the sandbox leaves readable but this identity cannot read (under Landlock,
                // access() answers for the helper's own uid; missing paths are not reported).
                let unreadable = report.files_by_landlock == 0 ? [] : readable.filter { path in
                    access(path, R_OK) != 0 && errno == EACCES
                }
                status = SandboxStatus(systemCallFilter: report.seccomp != 0, filesByLandlock: report.files_by_landlock != 0,
                                       landlockABI: Int(report.landlock_abi), networkByLandlock: report.landlock_network != 0,
                                       scopesByLandlock: report.landlock_scopes != 0, capabilitiesDropped: report.capabilities_dropped != 0,
                                       leftRoot: report.changed_identity != 0, userID: report.uid, groupID: report.gid, failure: nil)
                status.unreadablePaths = Array(unreadable.prefix(WireRules.maximumUnreadablePaths))
                status.threadCap = Int(report.thread_cap)
                status.threadCapPerHelper = report.thread_cap_per_helper != 0
            } else {
                // A helper whose sandbox failed half-way says so and decodes nothing.
                status = .off("the sandbox could not be entered: \(String(cString: strerror(-result)))")
                var ready = WireWriter()
                ready.bool(false)
                ready.string(status.summary)
                ready.bytes(status.encoded())
                _ = send(WireMessage(.ready, ready.data))
                exit(0)
            }
        }
        // A helper stuck in a decode would outlive a host that died; this thread (started inside
        // the sandbox, so it is confined too) ends it. A zygote's copy watches the zygote, which
        // ends when the host does.
        _ = nukeiso_watch_parent()
        var ready = WireWriter()
        ready.bool(status.isActive)
        ready.string(status.isActive ? status.summary : status.failure ?? "")
        ready.bytes(status.encoded())
        guard send(WireMessage(.ready, ready.data)) else { exit(0) }
        serve()
        // Straight out: the libraries' exit handlers and destructors would page in and run code
        // of every codec (about 4 ms of CPU per helper, beside the next decode) for a process
        // whose memory the kernel is about to drop anyway.
        _exit(0)
    }

    /// Everything that reads files lazily, done before the sandbox forbids opening them: the
    /// registry's discovery, each codec's first decode (tables, plugins), the locale.
    ///
    /// The files decoded are the host's `samples` where it sent one: encoding a sample here would
    /// start encoders a helper never uses (x265 and aom alone take about 20 ms).
    ///
    /// `formats` are the formats to prepare (`nil`: every registered one).
    @discardableResult
    private static func warmUp(filesStayReadable: Bool, samples: [ImageType: Data], formats: Set<ImageType>?) -> [ImageType] {
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
        if prepared.contains(.svg), filesStayReadable {
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
        // The colour manager (NukeColor, when linked) reads its standard CMYK profile once, now:
        // a CMYK JPEG without a profile is converted with it as in process.
        _ = try? ImageColorManagement.current?.cmykConverter(profile: nil, inverted: false, to: .sRGB, pixelCount: 1)
        _ = String(describing: 1.5)
        return prepared
    }

    /// Runs what serving a decode runs, on the warm-up samples and without the host, so that the
    /// Swift runtime instantiates the generic types and resolves the protocol conformances a
    /// decode needs here, once, in the zygote every helper is a copy of, rather than in each
    /// helper while the host waits for its answer (about 0.3 ms per decode: a conformance is
    /// found by scanning every loaded library's conformance records).
    ///
    /// Only the warm-up samples are decoded, into the process's own memory: nothing here has
    /// seen an untrusted byte.
    private static func rehearse(_ samples: [ImageType: Data]) {
        let request = IsolatedDecodeRequest(context: ImageDecodingContext(data: Data()), limits: IsolationLimits(), wantsPreviews: true,
                                            servesFrames: false)
        guard let decoded = try? IsolatedDecodeRequest(decoding: request.encoded()) else { return }
        // A full decode and a thumbnail (the scaling plans, the resampler).
        for (sample, target) in samples.values.flatMap({ [($0, nil), ($0, ImageSize(width: 1, height: 1))] }) {
            var context = decoded.context(data: sample, allocator: .heap)
            context.targetSize = target
            guard let (made, _) = ImageDecoderRegistry.shared.incrementalDecoder(for: context) else { continue }
            var decoder: (any IncrementalImageDecoding)? = made
            decoder?.setWantsPreviews(true)
            decoder?.push(sample)
            decoder?.finish()
            var failure: ImageCodecError?
            events: for _ in 0..<64 {
                do {
                    guard let event = try decoder?.next() else { break }
                    switch event {
                    case .needsMoreData: break events
                    case .header(let header): _ = header.encoded()
                    case .preview(let container), .final(let container):
                        var writer = WireWriter()
                        writer.bytes(WireImage(container: container).encoded())
                        writer.int(0)
                        _ = writer.data
                        if case .final = event { break events }
                    }
                } catch {
                    failure = (error as? ImageCodecError) ?? ImageCodecError(.decoderFailed, stage: .decoding, format: nil, message: "\(error)")
                    break
                }
            }
            decoder = nil
            _ = failure?.encoded()
        }
        _ = ImageCodecError(.noCodec, stage: .registry, message: "rehearsal").encoded()
        SharedMemoryAllocator.rehearse()
    }

    // MARK: - Serving

    /// Serves one decode: `.start`, pushes and `.next` requests, frames of its animation, until
    /// `.end` or the host closes the socket.
    private static func serve() {
        var request: IsolatedDecodeRequest?
        var decoder: (any IncrementalImageDecoding)?
        var codec: ImageCodecInfo?
        var failure: ImageCodecError?
        // The final image's animation, and the frame decoder serving `.frame` requests from it.
        var animation: ImageAnimation?
        var frames: (any AnimationFrameDecoding)?
        while let message = receive(limit: Int(UInt32.max)) {
            switch message.kind {
            case .start:
                // One decode per helper: a second start is not served.
                guard request == nil else { return }
                request = try? IsolatedDecodeRequest(decoding: message.payload)
                failure = request == nil ? ImageCodecError(.internalFailure, stage: .registry, codec: "NukeIsolation", message: "a malformed request") : nil
                if let request { applyLimits(request, firstTime: true) }
            case .push:
                guard failure == nil, let request else { continue }
                if decoder == nil {
                    let context = request.context(data: message.payload, allocator: SharedMemoryAllocator.allocator)
                    if let (made, info) = ImageDecoderRegistry.shared.incrementalDecoder(for: context) {
                        // A codec that declares a CPU-time limit (NukeSVG's render time) gets it, when shorter.
                        if let key = ImageCodecs.linked.first(where: { $0.info.type == context.type })?.cpuTimeLimitKey,
                           case let milliseconds = request.limits[key], milliseconds < Int.max / 2 {
                            let seconds = max(1, (milliseconds + 999) / 1000)
                            if request.cpuSeconds == 0 || seconds < request.cpuSeconds {
                                // A second of ceiling above it: at the ceiling the kernel sends SIGKILL, which
                                // would read as a helper lost rather than a limit reached.
                                _ = nukeiso_set_limits(0, UInt64(seconds), UInt64(seconds + 1))
                            }
                        }
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
                    // A helper that goes on to serve frames keeps the final image (a frame decoder
                    // may start from it): the host gets a copy.
                    guard reply(event, keepsFinalImage: request?.servesFrames == true && animation != nil) else { return }
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
                    // Each frame gets the CPU time of a decode, within the ceiling set at the start.
                    if let request { applyLimits(request, firstTime: false) }
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
            default:
                // `.end`, or anything a helper does not serve.
                return
            }
        }
    }

    /// The decode's address space and CPU time, as hard limits that code running here cannot
    /// raise: at the start, CPU time for the decode and, for an animation whose frames this helper
    /// will serve, a ceiling of one decode's time per frame; for each frame, one decode's time
    /// within that ceiling.
    private static func applyLimits(_ request: IsolatedDecodeRequest, firstTime: Bool) {
        let cpu = UInt64(max(0, request.cpuSeconds))
        let frames = request.servesFrames ? UInt64(min(max(request.limits.maxFrameCount, 1), 10_000)) : 1
        let ceiling = cpu.multipliedReportingOverflow(by: frames + 1)
        _ = nukeiso_set_limits(firstTime ? UInt64(max(0, request.addressSpace)) : 0, cpu,
                               ceiling.overflow ? UInt64(Int32.max) : ceiling.partialValue)
    }

    private static func reply(_ event: ImageDecodingEvent, keepsFinalImage: Bool) -> Bool {
        switch event {
        case .needsMoreData:
            return send(WireMessage(.needsMoreData))
        case .header(let header):
            return send(WireMessage(.header, header.encoded()))
        case .preview(let container):
            return sendImage(container, kind: .preview, shareStorage: false)
        case .final(let container):
            return sendImage(container, kind: .final, shareStorage: !keepsFinalImage)
        }
    }

    /// Sends the image's description and the id of the host's buffer holding its pixels: the
    /// decoder's own buffer for the final image, a copy otherwise (a preview, whose memory the
    /// decoder goes on writing).
    private static func sendImage(_ container: ImageContainer, kind: WireMessage.Kind, shareStorage: Bool) -> Bool {
        let bitmap = container.image.bitmap
        let image = WireImage(container: container)
        var id = shareStorage ? bitmap.withUnsafeBytes { SharedMemoryAllocator.bufferID(at: $0.baseAddress) } : nil
        var copy: PixelStorage?
        if id == nil {
            guard let storage = try? SharedMemoryAllocator.allocator.allocate(byteCount: image.byteCount) else {
                let error = ImageCodecError(.internalFailure, stage: .decoding, format: container.type, codec: "NukeIsolation",
                                            message: "the helper cannot get \(image.byteCount) bytes of shared memory")
                return send(WireMessage(.failure, error.encoded()))
            }
            // The allocator's own memory, not yet seen by anyone: writing it through the address is sound.
            let target = storage.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
            bitmap.withUnsafeBytes { source in
                if let base = source.baseAddress, let target, source.count > 0 {
                    target.copyMemory(from: base, byteCount: min(source.count, image.byteCount))
                }
            }
            id = SharedMemoryAllocator.bufferID(at: target)
            copy = storage
        }
        defer { withExtendedLifetime(copy) {} }
        guard let id else { return false }
        var writer = WireWriter()
        writer.bytes(image.encoded())
        writer.int(id)
        return send(WireMessage(kind, writer.data))
    }

    // MARK: - Messages

    private static func send(_ message: WireMessage) -> Bool {
        SharedMemoryAllocator.channel.withLock { _ in sendUnlocked(message) }
    }

    /// The host's next message; `nil` at the end, or for a message longer than `limit`.
    private static func receive(limit: Int) -> WireMessage? {
        SharedMemoryAllocator.channel.withLock { _ in receiveUnlocked(limit: limit) }
    }

    /// ``send(_:)`` for a caller that holds the channel's lock.
    static func sendUnlocked(_ message: WireMessage) -> Bool {
        message.write(to: socket) == 0
    }

    /// ``receive(limit:)`` for a caller that holds the channel's lock.
    static func receiveUnlocked(limit: Int) -> WireMessage? {
        var header = [UInt8](repeating: 0, count: 5)
        guard header.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, 5, -1) }) == 0,
              let kind = WireMessage.Kind(rawValue: header[0]) else { return nil }
        let length = Int(UInt32(header[1]) | UInt32(header[2]) << 8 | UInt32(header[3]) << 16 | UInt32(header[4]) << 24)
        guard length <= limit else { return nil }
        var payload = Data(count: length)
        if length > 0 {
            guard payload.withUnsafeMutableBytes({ nukeiso_read_all(socket, $0.baseAddress!, length, -1) }) == 0 else { return nil }
        }
        return WireMessage(kind, payload)
    }
}
