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

/// The host's side of a helper's pixels: a sealed shared-memory buffer, mapped as an image's
/// storage.
///
/// A helper hands a buffer over sealed against shrinking, growing and writing (`F_SEAL_WRITE`
/// needs the helper's own writable mapping gone first), so once the host has checked the seals no
/// process, that helper included, can change the pixels the host holds or make the host fault.
/// The host maps it privately: its own writes copy the page. Each helper serves one decode, and
/// nothing of a buffer goes back to any helper.
enum SealedPixels {
    /// Why a buffer the helper sent cannot be used.
    struct Refused: Error {
        var reason: String
    }

    /// The storage for an image of `byteCount` bytes that the helper sent in `descriptor` (closed
    /// here), which it says holds `capacity` bytes.
    static func adopt(descriptor: Int32, capacity: Int, byteCount: Int) throws(Refused) -> PixelStorage {
        defer { nukeiso_close(descriptor) }
        // The helper allocates exactly what an image needs (one byte for an empty one).
        guard byteCount >= 0, capacity == max(byteCount, 1) else {
            throw Refused(reason: "a \(byteCount)-byte image in a \(capacity)-byte buffer")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) == capacity else {
            throw Refused(reason: "a buffer that is not the \(capacity) bytes it claims")
        }
        guard nukeiso_is_sealed(descriptor) != 0 else { throw Refused(reason: "a buffer it can still write") }
        guard let mapped = nukeiso_map_sealed(descriptor, capacity) else { throw Refused(reason: "a \(capacity)-byte buffer that cannot be mapped") }
        return PixelStorage(adopting: mapped, byteCount: byteCount) { pointer in
            nukeiso_unmap(pointer.baseAddress, capacity)
        }
    }
}
