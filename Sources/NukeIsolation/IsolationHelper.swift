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
        // glib stamps its log lines with the local time: without TZ it reads /etc/localtime.
        setenv("TZ", "UTC0", 1)
        warmUp()
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
        var ready = WireWriter()
        ready.bool(isSandboxed)
        ready.string(note)
        guard send(WireMessage(.ready, ready.data)) else { exit(0) }
        serve()
        exit(0)
    }

    /// Everything that reads files lazily, done before the sandbox forbids opening them: the
    /// registry's discovery, each codec's first decode (tables, plugins), the locale.
    private static func warmUp() {
        let registry = ImageDecoderRegistry.shared
        let tiny = Image(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 200, count: 16)))
        for type in registry.registeredFormats {
            if let encoded = try? ImageEncoderRegistry.shared.encode(tiny, as: type) {
                _ = try? registry.decode(encoded)
            }
        }
        // SVG has no encoder: render text in the default and generic families, so that fontconfig
        // reads its configuration before the sandbox (and, on a kernel without Landlock, where
        // no file can be opened afterwards, the fonts they resolve to are opened now).
        if registry.registeredFormats.contains(.svg) {
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
        while let message = receive() {
            switch message.kind {
            case .start:
                request = try? IsolatedDecodeRequest(decoding: message.payload)
                decoder = nil
                codec = nil
                failure = request == nil ? ImageCodecError(.internalFailure, stage: .registry, codec: "NukeIsolation", message: "a malformed request") : nil
                if let request { _ = nukeiso_set_limits(UInt64(max(0, request.addressSpace)), UInt64(max(0, request.cpuSeconds))) }
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
                    guard reply(event) else { return }
                } catch {
                    let wrapped = (error as? ImageCodecError)
                        ?? ImageCodecError(.decoderFailed, stage: .decoding, format: nil,
                                           codec: codec?.codecDescription, message: String(describing: error))
                    failure = wrapped
                    decoder = nil
                    guard send(WireMessage(.failure, wrapped.encoded())) else { return }
                }
            case .end:
                request = nil
                decoder = nil
                codec = nil
                failure = nil
                _ = nukeiso_set_limits(0, 0)
            default:
                return
            }
        }
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

    /// Sends the image's description, then its pixels' shared-memory descriptor: the decoder's
    /// own memory when it is shared memory (the final image), a copy otherwise (a preview, whose
    /// memory the decoder goes on writing).
    private static func sendImage(_ container: ImageContainer, kind: WireMessage.Kind, shareStorage: Bool) -> Bool {
        let bitmap = container.image.bitmap
        let image = WireImage(container: container)
        let fd: Int32
        var owned = false
        if shareStorage, let shared = bitmap.withUnsafeBytes({ SharedMemoryAllocator.descriptor(of: $0.baseAddress) }) {
            fd = shared
        } else {
            let copy = nukeiso_memfd(image.byteCount)
            guard copy >= 0, let address = nukeiso_map(copy, image.byteCount, 1) else {
                let error = ImageCodecError(.internalFailure, stage: .decoding, format: container.type, codec: "NukeIsolation",
                                            message: "the helper cannot make \(image.byteCount) bytes of shared memory")
                return send(WireMessage(.failure, error.encoded()))
            }
            bitmap.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress, bytes.count > 0 { address.copyMemory(from: base, byteCount: bytes.count) }
            }
            nukeiso_unmap(address, image.byteCount)
            fd = copy
            owned = true
        }
        defer { if owned { nukeiso_close(fd) } }
        guard send(WireMessage(kind, image.encoded())) else { return false }
        return nukeiso_send_fd(socket, fd) == 0
    }

    // MARK: - Messages

    private static func send(_ message: WireMessage) -> Bool {
        var data = Data([message.kind.rawValue])
        withUnsafeBytes(of: UInt32(message.payload.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(message.payload)
        return data.withUnsafeBytes { nukeiso_write_all(socket, $0.baseAddress!, $0.count) } == 0
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

/// Pixel memory in the helper: each buffer is its own memfd, so the final image can be handed to
/// the host as a file descriptor, without copying it.
enum SharedMemoryAllocator {
    /// Live buffers: their address and descriptor.
    private static let buffers = Mutex<[UInt: Int32]>([:])

    static let allocator = PixelAllocator { byteCount, _ throws(ImageCodecError) in
        // memfd memory starts zeroed, so `zeroed` costs nothing.
        let fd = nukeiso_memfd(byteCount)
        guard fd >= 0, let address = nukeiso_map(fd, byteCount, 1) else {
            if fd >= 0 { nukeiso_close(fd) }
            throw ImageCodecError(.internalFailure, stage: .decoding, codec: "NukeIsolation",
                                  message: "the helper cannot allocate \(byteCount) bytes of shared memory")
        }
        buffers.withLock { $0[UInt(bitPattern: address)] = fd }
        return PixelStorage(adopting: address, byteCount: byteCount) { buffer in
            let fd = buffers.withLock { $0.removeValue(forKey: UInt(bitPattern: buffer.baseAddress)) }
            nukeiso_unmap(buffer.baseAddress, buffer.count)
            if let fd { nukeiso_close(fd) }
        }
    }

    /// The descriptor of the buffer starting at `address`, when it is one of ours.
    static func descriptor(of address: UnsafeRawPointer?) -> Int32? {
        guard let address else { return nil }
        return buffers.withLock { $0[UInt(bitPattern: address)] }
    }
}
