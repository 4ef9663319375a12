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

/// The host's side of one helper's pixel buffers: shared memory that both processes keep mapped
/// from one decode to the next.
///
/// A helper decodes into memfd buffers. The first time the host receives one it maps it and keeps
/// the mapping; when the image using it is released, the buffer goes back to the helper (it is
/// *released* at the start of the next decode) and the helper may decode into it again. Neither
/// process maps, page-faults or zero-fills the memory again, which is most of what isolation cost
/// on small images. Buffers beyond ``IsolationConfiguration/reusableBytesPerHelper`` are unmapped
/// here and the helper is told to forget them.
///
/// The helper can never write into a buffer the host is using: it reuses only buffers the host has
/// released, and the host releases a buffer only when no image uses it any more. Every buffer's
/// size is sealed (`F_SEAL_SHRINK`, `F_SEAL_GROW`), checked before the first mapping, so a helper
/// cannot make the host fault by shrinking one.
///
/// ## Why this is `Sendable`
///
/// All mutable state is behind `state`, a `Mutex`: images are released on any thread while the
/// helper decodes for another caller.
final class HelperBuffers: Sendable {
    private struct Mapping {
        var address: UInt
        var capacity: Int
        var inUse: Bool
    }

    private struct State {
        var mappings: [Int: Mapping] = [:]
        /// Given back by images here, not yet released to the helper.
        var returned: [Int] = []
        /// Released to the helper, oldest first: it may decode into them.
        var released: [Int] = []
        /// Unmapped here; the helper is to unmap them too.
        var forgotten: [Int] = []
        var isOpen = true

        var idleBytes: Int {
            (returned + released).reduce(0) { $0 + (mappings[$1]?.capacity ?? 0) }
        }
    }

    private let budget: Int
    private let state = Mutex(State())

    init(budget: Int) {
        self.budget = max(0, budget)
    }

    /// Why a buffer the helper named cannot be used.
    struct Refused: Error {
        var reason: String
    }

    /// The storage for an image the helper sent in buffer `id`: mapped now when the helper sent
    /// its descriptor (`descriptor`, closed here), else the mapping kept from an earlier decode.
    func adopt(id: Int, capacity: Int, byteCount: Int, descriptor: Int32?) throws(Refused) -> PixelStorage {
        guard byteCount >= 0, capacity >= max(byteCount, 1) else {
            if let descriptor { nukeiso_close(descriptor) }
            throw Refused(reason: "a \(byteCount)-byte image in a \(capacity)-byte buffer")
        }
        let address: UInt
        if let descriptor {
            defer { nukeiso_close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, Int(info.st_size) >= capacity else {
                throw Refused(reason: "a buffer smaller than the \(capacity) bytes it claims")
            }
            guard nukeiso_is_size_sealed(descriptor) != 0 else { throw Refused(reason: "a buffer whose size is not sealed") }
            guard let mapped = nukeiso_map(descriptor, capacity, 0) else { throw Refused(reason: "cannot map a \(capacity)-byte buffer") }
            address = UInt(bitPattern: mapped)
            let known = state.withLock { state -> Bool in
                if state.mappings[id] != nil { return true }
                state.mappings[id] = Mapping(address: address, capacity: capacity, inUse: true)
                return false
            }
            if known {
                nukeiso_unmap(mapped, capacity)
                throw Refused(reason: "buffer \(id) sent twice")
            }
        } else {
            let found: UInt? = state.withLock { state in
                guard let index = state.released.firstIndex(of: id), var mapping = state.mappings[id],
                      mapping.capacity == capacity else { return nil }
                state.released.remove(at: index)
                mapping.inUse = true
                state.mappings[id] = mapping
                return mapping.address
            }
            guard let found else { throw Refused(reason: "buffer \(id), which the host had not released to it") }
            address = found
        }
        return PixelStorage(adopting: UnsafeMutableRawPointer(bitPattern: address)!, byteCount: byteCount) { [self] _ in
            giveBack(id)
        }
    }

    /// An image using buffer `id` was released.
    private func giveBack(_ id: Int) {
        let unmap: [(UInt, Int)] = state.withLock { state in
            guard var mapping = state.mappings[id] else { return [] }
            guard state.isOpen else {
                state.mappings[id] = nil
                return [(mapping.address, mapping.capacity)]
            }
            mapping.inUse = false
            state.mappings[id] = mapping
            state.returned.append(id)
            // Over budget: buffers not yet released go first (the helper may be decoding into a
            // released one right now; those go in `reuseMessage`, while the helper waits).
            return Self.evict(from: \.returned, in: &state, budget: budget)
        }
        Self.unmap(unmap)
    }

    /// Forgets the oldest buffers of one list until the idle ones fit the budget.
    private static func evict(from list: WritableKeyPath<State, [Int]>, in state: inout State, budget: Int) -> [(UInt, Int)] {
        var unmap: [(UInt, Int)] = []
        while state.idleBytes > budget, !state[keyPath: list].isEmpty {
            let oldest = state[keyPath: list].removeFirst()
            if let gone = state.mappings.removeValue(forKey: oldest) { unmap.append((gone.address, gone.capacity)) }
            state.forgotten.append(oldest)
        }
        return unmap
    }

    private static func unmap(_ mappings: [(UInt, Int)]) {
        for (address, capacity) in mappings { nukeiso_unmap(UnsafeMutableRawPointer(bitPattern: address), capacity) }
    }

    /// The message that tells the helper which buffers it may reuse and which to forget, or `nil`
    /// when there is no news. Sent before a decode starts.
    /// Called only while the helper waits for a decode, so that it is decoding into none of them.
    func reuseMessage() -> WireMessage? {
        let (message, unmap): (WireMessage?, [(UInt, Int)]) = state.withLock { state in
            let releasing = state.returned
            state.released.append(contentsOf: releasing)
            state.returned.removeAll()
            let unmap = Self.evict(from: \.released, in: &state, budget: budget)
            let forgotten = Set(state.forgotten)
            let released = releasing.filter { !forgotten.contains($0) }
            guard !released.isEmpty || !state.forgotten.isEmpty else { return (nil, unmap) }
            var writer = WireWriter()
            writer.int(released.count)
            released.forEach { writer.int($0) }
            writer.int(state.forgotten.count)
            state.forgotten.forEach { writer.int($0) }
            state.forgotten.removeAll()
            return (WireMessage(.reuse, writer.data), unmap)
        }
        Self.unmap(unmap)
        return message
    }

    /// The bytes mapped here for this helper (images in use and idle buffers).
    var mappedBytes: Int {
        state.withLock { $0.mappings.values.reduce(0) { $0 + $1.capacity } }
    }

    /// The helper ended: idle buffers are unmapped now, the others when their images are released.
    func close() {
        let unmap: [(UInt, Int)] = state.withLock { state in
            state.isOpen = false
            let idle = state.mappings.filter { !$0.value.inUse }
            for id in idle.keys { state.mappings[id] = nil }
            state.returned.removeAll()
            state.released.removeAll()
            state.forgotten.removeAll()
            return idle.values.map { ($0.address, $0.capacity) }
        }
        Self.unmap(unmap)
    }
}
