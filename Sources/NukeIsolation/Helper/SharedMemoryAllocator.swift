#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CNukeIsolation
import NukeCore
import Synchronization

/// Pixel memory in the helper: memfd buffers that the host maps once they are handed over.
///
/// A buffer is handed over sealed (``NukeCore/PixelStorage`` stays valid here, over zero pages):
/// from then on nobody can write it, so the host holds pixels no helper can change. A helper
/// serves one decode, so nothing is kept from one decode to the next.
enum SharedMemoryAllocator {
    private struct Buffer {
        var fd: Int32
        var capacity: Int
    }

    /// Buffers by address, until handed over or released.
    private static let buffers = Mutex<[UInt: Buffer]>([:])

    static let allocator = PixelAllocator { byteCount, _ throws(ImageCodecError) in
        // memfd memory starts zeroed.
        let fd = nukeiso_memfd(byteCount)
        guard fd >= 0, let address = nukeiso_map(fd, byteCount, 1) else {
            if fd >= 0 { nukeiso_close(fd) }
            throw ImageCodecError(.internalFailure, stage: .decoding, codec: "NukeIsolation",
                                  message: "the helper cannot allocate \(byteCount) bytes of shared memory")
        }
        let key = UInt(bitPattern: address)
        buffers.withLock { $0[key] = Buffer(fd: fd, capacity: max(byteCount, 1)) }
        return PixelStorage(adopting: address, byteCount: byteCount) { pointer in
            let buffer = buffers.withLock { $0.removeValue(forKey: key) }
            nukeiso_unmap(pointer.baseAddress, buffer?.capacity ?? max(byteCount, 1))
            if let buffer { nukeiso_close(buffer.fd) }
        }
    }

    /// Seals the buffer at `address` for the host and returns its descriptor and size (the
    /// descriptor is the caller's to close); `nil` when the address is not one of ours. The
    /// memory at `address` reads zeros afterwards.
    static func handOver(_ address: UnsafeRawPointer?) -> (fd: Int32, capacity: Int)? {
        guard let address else { return nil }
        let key = UInt(bitPattern: address)
        guard let buffer = buffers.withLock({ $0.removeValue(forKey: key) }) else { return nil }
        guard nukeiso_seal_written(buffer.fd, UnsafeMutableRawPointer(mutating: address), buffer.capacity) == 0 else {
            nukeiso_close(buffer.fd)
            return nil
        }
        return (buffer.fd, buffer.capacity)
    }

    /// Closes every buffer a zygote's warm-up left: a helper copied from it starts with none.
    static func forgetAll() {
        let all = buffers.withLock { buffers -> [Buffer] in
            defer { buffers.removeAll() }
            return Array(buffers.values)
        }
        for buffer in all { nukeiso_close(buffer.fd) }
    }
}
