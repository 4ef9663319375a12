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

/// Pixel memory the host lends to helpers: shared-memory buffers the host made, keeps mapped and
/// reuses from one decode to the next, so that a decode in a fresh helper neither creates, maps,
/// faults in nor zero-fills new memory.
///
/// A helper asks for a buffer when its decoder allocates (`.allocate`, answered by `.buffer` with
/// the descriptor); the request is checked against the decode's limits before anything is made.
/// The final image and previews come back as buffer ids the host looks up: only a buffer lent
/// to that decode, large enough for the image, is accepted.
///
/// Nothing crosses from one upload to another:
/// - a buffer is lent again only after the helper it was lent to has been reaped (each helper
///   serves one decode), so no process that ever held its descriptor can still write it;
/// - whatever a buffer held is zeroed before it is lent again: when it falls idle, off the path of
///   the decode that borrows it next;
/// - its size is sealed (`F_SEAL_SHRINK`, `F_SEAL_GROW`, then `F_SEAL_SEAL`) before a helper sees
///   it, so no helper can make the host fault or seal the host out of its own buffer.
///
/// ## Why this is `Sendable`
///
/// All mutable state is behind `state`, a `Mutex`: images are released on any thread.
final class SharedPixelBuffers: Sendable {
    /// One decode's claim on buffers: its helper, until reaped.
    struct Lease: Hashable, Sendable {
        fileprivate let id: Int
    }

    private enum Use {
        case idle
        /// Lent to a decode whose helper may still write it.
        case lent(Lease)
        /// Holding an image this process uses (`lease` is the helper that wrote it).
        case image(Lease)
        /// The image was released; waits for its helper to be reaped.
        case released(Lease)
        /// Idle, being zeroed before it can be lent again.
        case zeroing
    }

    private struct Buffer {
        var fd: Int32
        var address: UInt
        var capacity: Int
        /// Bytes from the start that may hold someone's data.
        var dirty: Int
        var use: Use
        var lastUsed: Int
    }

    private struct State {
        var buffers: [Int: Buffer] = [:]
        var nextBuffer = 1
        var nextLease = 1
        /// Leases whose helper has been reaped.
        var ended: Set<Lease> = []
        /// Bytes each live lease has been lent.
        var lentBytes: [Lease: Int] = [:]
        var clock = 0

        var idleBytes: Int { buffers.values.reduce(0) { if case .idle = $1.use { $0 + $1.capacity } else { $0 } } }
    }

    private let budget: Int
    private let state = Mutex(State())

    /// `budget`: bytes of idle buffers kept for reuse.
    init(budget: Int) {
        self.budget = max(0, budget)
    }

    deinit {
        state.withLock { state in
            for buffer in state.buffers.values {
                if case .image = buffer.use { continue }
                nukeiso_unmap(UnsafeMutableRawPointer(bitPattern: buffer.address), buffer.capacity)
                nukeiso_close(buffer.fd)
            }
        }
    }

    /// A new lease for one decode.
    func makeLease() -> Lease {
        state.withLock { state in
            defer { state.nextLease += 1 }
            return Lease(id: state.nextLease)
        }
    }

    /// Why a helper's request for memory or an image's buffer is refused.
    struct Refused: Error {
        var reason: String
    }

    /// A zeroed buffer of at least `byteCount` bytes for `lease`'s helper: its id, descriptor
    /// (this process's; send it, do not close it) and capacity. At most `limit` bytes in all per
    /// lease.
    func lend(byteCount: Int, to lease: Lease, limit: Int) throws(Refused) -> (id: Int, fd: Int32, capacity: Int) {
        guard byteCount >= 0 else { throw Refused(reason: "a request for \(byteCount) bytes") }
        let wanted = max(byteCount, 1)
        let found: (Int, Buffer)? = try state.withLock { (state) throws(Refused) -> (Int, Buffer)? in
            let (total, overflow) = state.lentBytes[lease, default: 0].addingReportingOverflow(wanted)
            guard !overflow, total <= limit else {
                throw Refused(reason: "a request for \(byteCount) bytes of pixel memory, past the decode's \(limit)")
            }
            state.lentBytes[lease] = total
            state.clock += 1
            let fitting = state.buffers.filter {
                if case .idle = $0.value.use { return $0.value.capacity >= wanted && $0.value.capacity <= 2 * wanted + 65536 }
                return false
            }
            guard let (id, _) = fitting.min(by: { $0.value.capacity < $1.value.capacity }) else { return nil }
            state.buffers[id]?.use = .lent(lease)
            state.buffers[id]?.lastUsed = state.clock
            return (id, state.buffers[id]!)
        }
        if let (id, buffer) = found {
            // Whatever it held is gone before a helper sees it.
            if buffer.dirty > 0 { memset(UnsafeMutableRawPointer(bitPattern: buffer.address)!, 0, buffer.dirty) }
            state.withLock { $0.buffers[id]?.dirty = 0 }
            return (id, buffer.fd, buffer.capacity)
        }
        // A new buffer: memfd memory starts zeroed.
        let fd = nukeiso_memfd(wanted)
        guard fd >= 0 else { throw Refused(reason: "no shared memory for \(wanted) bytes: \(String(cString: strerror(-fd)))") }
        guard let address = nukeiso_map(fd, wanted, 1) else {
            nukeiso_close(fd)
            throw Refused(reason: "cannot map \(wanted) bytes of shared memory")
        }
        let id = state.withLock { state in
            defer { state.nextBuffer += 1 }
            state.buffers[state.nextBuffer] = Buffer(fd: fd, address: UInt(bitPattern: address), capacity: wanted, dirty: 0,
                                                     use: .lent(lease), lastUsed: state.clock)
            return state.nextBuffer
        }
        return (id, fd, wanted)
    }

    /// The storage for an image of `byteCount` bytes in buffer `id`, which must be lent to
    /// `lease` and large enough.
    func adopt(id: Int, byteCount: Int, lease: Lease) throws(Refused) -> PixelStorage {
        let address: UInt = try state.withLock { (state) throws(Refused) -> UInt in
            guard let buffer = state.buffers[id], case .lent(let owner) = buffer.use, owner == lease else {
                throw Refused(reason: "an image in buffer \(id), which was not lent to it")
            }
            guard byteCount >= 0, byteCount <= buffer.capacity else {
                throw Refused(reason: "a \(byteCount)-byte image in a \(buffer.capacity)-byte buffer")
            }
            state.buffers[id]?.use = .image(lease)
            state.buffers[id]?.dirty = buffer.capacity
            return buffer.address
        }
        return PixelStorage(adopting: UnsafeMutableRawPointer(bitPattern: address)!, byteCount: byteCount) { [self] _ in
            released(id)
        }
    }

    private func released(_ id: Int) {
        let (unmap, dirty): ([Buffer], [Int]) = state.withLock { state in
            guard let buffer = state.buffers[id], case .image(let lease) = buffer.use else { return ([], []) }
            state.buffers[id]?.use = state.ended.contains(lease) ? .idle : .released(lease)
            return (Self.evict(&state, budget: budget), Self.startZeroing(&state))
        }
        Self.destroy(unmap)
        zero(dirty)
    }

    /// Marks the idle buffers that may hold someone's data as being zeroed (``zero(_:)`` does
    /// it), so that zeroing happens when a buffer falls idle, off the path of the decode that
    /// borrows it next.
    private static func startZeroing(_ state: inout State) -> [Int] {
        var ids: [Int] = []
        for (id, buffer) in state.buffers where buffer.dirty > 0 {
            guard case .idle = buffer.use else { continue }
            state.buffers[id]?.use = .zeroing
            ids.append(id)
        }
        return ids
    }

    /// Zeroes the buffers ``startZeroing(_:)`` marked (no one else touches them meanwhile), then
    /// makes them idle.
    private func zero(_ ids: [Int]) {
        guard !ids.isEmpty else { return }
        let targets: [(id: Int, address: UInt, dirty: Int)] = state.withLock { state in
            ids.compactMap { id in state.buffers[id].map { (id, $0.address, $0.dirty) } }
        }
        for target in targets {
            memset(UnsafeMutableRawPointer(bitPattern: target.address)!, 0, target.dirty)
        }
        state.withLock { state in
            for target in targets {
                state.buffers[target.id]?.dirty = 0
                state.buffers[target.id]?.use = .idle
            }
        }
    }

    /// `lease`'s helper has been reaped: what it was lent and did not hand over is idle again, and
    /// so are its released images' buffers.
    func ended(_ lease: Lease) {
        let (unmap, dirty): ([Buffer], [Int]) = state.withLock { state in
            state.ended.insert(lease)
            state.lentBytes[lease] = nil
            for (id, buffer) in state.buffers {
                switch buffer.use {
                case .lent(let owner) where owner == lease:
                    state.buffers[id]?.use = .idle
                    state.buffers[id]?.dirty = buffer.capacity
                case .released(let owner) where owner == lease:
                    state.buffers[id]?.use = .idle
                default:
                    break
                }
            }
            // Leases of images still in use stay in `ended`; forget the rest.
            let live = Set(state.buffers.values.compactMap { buffer -> Lease? in
                if case .image(let owner) = buffer.use { return owner }
                return nil
            })
            state.ended = state.ended.filter { live.contains($0) || $0 == lease }
            return (Self.evict(&state, budget: budget), Self.startZeroing(&state))
        }
        Self.destroy(unmap)
        zero(dirty)
    }

    /// Unmaps the least recently used idle buffers until the idle ones fit the budget.
    private static func evict(_ state: inout State, budget: Int) -> [Buffer] {
        var gone: [Buffer] = []
        while state.idleBytes > budget {
            let idle = state.buffers.filter { if case .idle = $0.value.use { return true }; return false }
            guard let (id, buffer) = idle.min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { break }
            state.buffers[id] = nil
            gone.append(buffer)
        }
        return gone
    }

    private static func destroy(_ buffers: [Buffer]) {
        for buffer in buffers {
            nukeiso_unmap(UnsafeMutableRawPointer(bitPattern: buffer.address), buffer.capacity)
            nukeiso_close(buffer.fd)
        }
    }

    /// Bytes mapped here (images and idle buffers).
    var mappedBytes: Int {
        state.withLock { $0.buffers.values.reduce(0) { $0 + $1.capacity } }
    }
}
