import Synchronization
import NukeCore

/// A thread-safe cache of pixel buffers, so that decoding many images of the same size reuses
/// memory instead of mapping and page-faulting a fresh buffer each time.
///
/// Decode through a pool with `PixelAllocator.pool(_:)`. A buffer goes back to the pool when
/// the last `Bitmap` (or other holder of its `PixelStorage`) is released, never earlier, so
/// a buffer handed out again is never shared with a live bitmap. The storage holds the pool
/// weakly: when the pool is gone, released buffers are simply freed.
///
/// ## Size classes
///
/// Requests are rounded up to a size class, and a request reuses only an idle buffer of exactly
/// its class: below 4 KiB, 4 KiB; below 1 MiB, the next power of two; from 1 MiB on, the next
/// multiple of 64 KiB (at most 6.25 % more than asked, and images of one size share a class).
/// See ``capacity(forByteCount:)``.
///
/// ## Memory
///
/// Idle buffers count against ``idleByteBudget``; when a returned buffer takes the idle total
/// over it, the buffers idle the longest are freed first. Buffers in use are not counted: the
/// budget bounds only what the pool keeps for later.
///
/// Release idle memory on demand with ``trim(to:)`` or ``removeAll()``. On Apple platforms an app
/// would call them from a `DispatchSource.makeMemoryPressureSource` handler; Dispatch on Linux
/// has no memory-pressure source, so a Linux app calls them itself — after a batch, on a timer,
/// or when its own accounting (for example a cgroup's `memory.high` events) says memory is short.
public final class PixelBufferPool: Sendable {
    /// Counters for tests and benchmarks.
    public struct Statistics: Sendable, Hashable {
        /// Allocations served by an idle buffer.
        public var hits: Int
        /// Allocations that needed a new buffer.
        public var misses: Int
        /// Bytes held in idle buffers (their full size classes).
        public var idleBytes: Int
        /// The number of idle buffers.
        public var idleBufferCount: Int
    }

    /// An idle buffer: its address as a bit pattern and its size class.
    private struct Entry {
        var address: UInt
        var capacity: Int
    }

    private struct State {
        /// Idle buffers, the longest idle first.
        var idle: [Entry] = []
        var idleBytes = 0
        var idleByteBudget: Int
        var hits = 0
        var misses = 0

        /// Removes the longest-idle buffers until at most `limit` bytes stay idle, and returns them.
        mutating func evict(downTo limit: Int) -> [Entry] {
            var count = 0
            var bytes = idleBytes
            while bytes > limit, count < idle.count {
                bytes -= idle[count].capacity
                count += 1
            }
            guard count > 0 else { return [] }
            let evicted = Array(idle[..<count])
            idle.removeFirst(count)
            idleBytes = bytes
            return evicted
        }
    }

    private let state: Mutex<State>

    /// Creates a pool that keeps at most `idleByteBudget` bytes of idle buffers.
    public init(idleByteBudget: Int = 256 << 20) {
        precondition(idleByteBudget >= 0, "negative budget")
        state = Mutex(State(idleByteBudget: idleByteBudget))
    }

    deinit {
        // No storage can return a buffer any more (they hold the pool weakly): free the idle ones.
        let idle = state.withLock { $0.evict(downTo: 0) }
        Self.free(idle)
    }

    /// The most bytes the pool keeps in idle buffers; lowering it frees the excess at once.
    public var idleByteBudget: Int {
        get { state.withLock { $0.idleByteBudget } }
        set {
            precondition(newValue >= 0, "negative budget")
            let evicted = state.withLock { state in
                state.idleByteBudget = newValue
                return state.evict(downTo: newValue)
            }
            Self.free(evicted)
        }
    }

    /// The current counters.
    public var statistics: Statistics {
        state.withLock { Statistics(hits: $0.hits, misses: $0.misses, idleBytes: $0.idleBytes, idleBufferCount: $0.idle.count) }
    }

    /// The size class of a request: the number of bytes actually allocated for it.
    public static func capacity(forByteCount byteCount: Int) -> Int {
        precondition(byteCount >= 0, "negative byte count")
        if byteCount <= 4096 { return 4096 }
        if byteCount < 1 << 20 { return 1 << (Int.bitWidth - (byteCount - 1).leadingZeroBitCount) }
        let granule = 64 << 10
        let (rounded, overflow) = byteCount.addingReportingOverflow(granule - 1)
        precondition(!overflow, "byte count too large")
        return rounded & ~(granule - 1)
    }

    /// Returns storage of `byteCount` bytes, reusing an idle buffer of the same size class when
    /// there is one.
    ///
    /// The buffer comes back to the pool when the storage is released.
    /// - Parameters:
    ///   - byteCount: The number of bytes needed (≥ 0).
    ///   - zeroed: `true` to fill the bytes with zeros; otherwise their contents are undefined
    ///     (a reused buffer holds whatever its last user wrote).
    public func allocate(byteCount: Int, zeroed: Bool = false) -> PixelStorage {
        let capacity = Self.capacity(forByteCount: byteCount)
        let reused: UInt? = state.withLock { state in
            // The most recently returned buffer of the class: the likeliest still in cache.
            guard let index = state.idle.lastIndex(where: { $0.capacity == capacity }) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            state.idleBytes -= capacity
            return state.idle.remove(at: index).address
        }
        let pointer = reused.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
            ?? UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: PixelStorage.alignment)
        if zeroed { pointer.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount) }
        return PixelStorage(adopting: pointer, byteCount: byteCount) { [weak self] buffer in
            guard let base = buffer.baseAddress else { return }
            if let self {
                self.recycle(base, capacity: capacity)
            } else {
                base.deallocate()
            }
        }
    }

    /// Frees the longest-idle buffers until at most `byteCount` bytes stay idle.
    public func trim(to byteCount: Int) {
        let evicted = state.withLock { $0.evict(downTo: max(byteCount, 0)) }
        Self.free(evicted)
    }

    /// Frees every idle buffer. Buffers in use are unaffected and return to the pool when released.
    public func removeAll() {
        trim(to: 0)
    }

    /// Takes back a buffer whose last user released it; frees the oldest over the budget.
    private func recycle(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        let evicted = state.withLock { state in
            state.idle.append(Entry(address: UInt(bitPattern: pointer), capacity: capacity))
            state.idleBytes += capacity
            return state.evict(downTo: state.idleByteBudget)
        }
        Self.free(evicted)
    }

    /// Frees buffers outside the lock: returning a large block to the system is a syscall.
    private static func free(_ entries: [Entry]) {
        for entry in entries {
            UnsafeMutableRawPointer(bitPattern: entry.address)?.deallocate()
        }
    }
}

extension PixelAllocator {
    /// Buffers from `pool`, returned to it when the last bitmap using them is released.
    public static func pool(_ pool: PixelBufferPool) -> PixelAllocator {
        PixelAllocator { byteCount, zeroed in pool.allocate(byteCount: byteCount, zeroed: zeroed) }
    }
}
