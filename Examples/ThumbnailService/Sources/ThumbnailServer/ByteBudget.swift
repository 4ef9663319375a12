import Synchronization

/// Bytes of request bodies and source downloads the service holds in memory at once, shared by
/// every request: a request reserves what it will read before reading it (the declared length,
/// or chunk by chunk as it arrives) and returns it when its response is made. What does not fit
/// is refused at once (503 with `Retry-After`), so memory follows the budget, not the number
/// of connections.
final class ByteBudget: Sendable {
    let limit: Int
    private struct State {
        var reserved = 0
        /// Bytes reserved since the heap was last trimmed.
        var churn = 0
    }
    private let state = Mutex(State())
    /// Called (outside the lock) when the last reservation of a burst is returned: the heap
    /// gives freed blocks back to the kernel.
    private let onIdle: @Sendable () -> Void
    /// A burst smaller than this is not worth a trim.
    private let trimAfter: Int

    init(limit: Int, trimAfter: Int = 64 << 20, onIdle: @escaping @Sendable () -> Void = { HeapTuning.releaseFreeMemory() }) {
        self.limit = max(limit, 0)
        self.trimAfter = trimAfter
        self.onIdle = onIdle
    }

    /// Reserves `bytes`, or returns `false` (reserving nothing) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        return state.withLock { state in
            guard bytes <= limit - state.reserved else { return false }
            state.reserved += bytes
            state.churn += bytes
            return true
        }
    }

    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        let idle = state.withLock { state -> Bool in
            state.reserved = max(0, state.reserved - bytes)
            guard state.reserved == 0, state.churn >= trimAfter else { return false }
            state.churn = 0
            return true
        }
        if idle { onIdle() }
    }

    var reserved: Int { state.withLock { $0.reserved } }

    /// One request's share: reserved as it reads, returned all at once when it ends.
    final class Share: Sendable {
        let budget: ByteBudget
        private let held = Mutex(0)

        init(_ budget: ByteBudget) { self.budget = budget }

        /// Grows the share to `total` bytes; `false` when the budget cannot give the difference.
        func grow(to total: Int) -> Bool {
            held.withLock { held in
                guard total > held else { return true }
                guard budget.reserve(total - held) else { return false }
                held = total
                return true
            }
        }

        var bytes: Int { held.withLock { $0 } }

        /// Returns everything; the share can grow again afterwards.
        func release() {
            let bytes = held.withLock { held -> Int in
                defer { held = 0 }
                return held
            }
            budget.release(bytes)
        }

        deinit { release() }
    }
}
