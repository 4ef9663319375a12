#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CNukeIsolation
import NukeCore
import Synchronization

/// Pixel memory in the helper: buffers the host lends (``SharedPixelBuffers`` is its side).
///
/// A decoder's allocation becomes a `.allocate` message; the host checks it against the decode's
/// limits and answers `.buffer` with a zeroed, size-sealed memfd it keeps mapped. An image goes
/// back as the id of the buffer it lies in. The helper creates no shared memory of its own (its
/// sandbox does not let it).
enum SharedMemoryAllocator {
    private struct Buffer {
        var id: Int
        var capacity: Int
    }

    /// Buffers by address.
    private static let buffers = Mutex<[UInt: Buffer]>([:])
    /// One request and its answer at a time on the channel.
    static let channel = Mutex<Void>(())

    static let allocator = PixelAllocator { byteCount, _ throws(ImageCodecError) in
        // The host's buffers come zeroed.
        func fail(_ why: String) -> ImageCodecError {
            ImageCodecError(.internalFailure, stage: .decoding, codec: "NukeIsolation", message: "the helper got no \(byteCount) bytes of pixel memory: \(why)")
        }
        let lent: (id: Int, capacity: Int, fd: Int32)? = channel.withLock { _ in
            var request = WireWriter()
            request.int(byteCount)
            guard IsolationHelper.sendUnlocked(WireMessage(.allocate, request.data)),
                  let answer = IsolationHelper.receiveUnlocked(limit: 64), answer.kind == .buffer else { return nil }
            var reader = WireReader(answer.payload)
            guard let id = try? reader.int(), let capacity = try? reader.int(), capacity >= byteCount else { return nil }
            let fd = nukeiso_recv_fd(IsolationHelper.socket, -1)
            return fd >= 0 ? (id, capacity, fd) : nil
        }
        guard let lent else { throw fail("the host refused") }
        defer { nukeiso_close(lent.fd) }
        guard let address = nukeiso_map(lent.fd, lent.capacity, 1) else { throw fail("it cannot be mapped") }
        let key = UInt(bitPattern: address)
        buffers.withLock { $0[key] = Buffer(id: lent.id, capacity: lent.capacity) }
        return PixelStorage(adopting: address, byteCount: byteCount) { pointer in
            let buffer = buffers.withLock { $0.removeValue(forKey: key) }
            nukeiso_unmap(pointer.baseAddress, buffer?.capacity ?? max(byteCount, 1))
        }
    }

    /// Adds a buffer and removes it, so that the runtime makes the table's types before any
    /// untrusted byte (``IsolationHelper`` rehearses a decode in the zygote).
    static func rehearse() {
        buffers.withLock { buffers in
            buffers[0] = Buffer(id: 0, capacity: 0)
            buffers[0] = nil
        }
    }

    /// The id of the host's buffer starting at `address`; `nil` when the address is not one.
    static func bufferID(at address: UnsafeRawPointer?) -> Int? {
        guard let address else { return nil }
        return buffers.withLock { $0[UInt(bitPattern: address)]?.id }
    }
}
