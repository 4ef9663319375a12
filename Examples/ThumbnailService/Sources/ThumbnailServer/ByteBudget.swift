import Synchronization

/// Bytes of request bodies and source downloads the service holds in memory at once, shared by
/// every request: a request reserves what it will read before reading it (the declared length,
/// or chunk by chunk as it arrives) and returns it when its response is made. What does not fit
/// is refused at once (503 with `Retry-After`), so memory follows the budget, not the number
/// of connections.
final class ByteBudget: Sendable {
    let limit: Int
    private let state = Mutex(0)
    /// Trims the heap when this budget and every other it shares the trimmer with are idle.
    let trimmer: HeapTrimmer

    init(limit: Int, trimmer: HeapTrimmer = HeapTrimmer()) {
        self.limit = max(limit, 0)
        self.trimmer = trimmer
    }

    /// Reserves `bytes`, or returns `false` (reserving nothing) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let reserved = state.withLock { reserved in
            guard bytes <= limit - reserved else { return false }
            reserved += bytes
            return true
        }
        if reserved { trimmer.reserved(bytes) }
        return reserved
    }

    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { $0 = max(0, $0 - bytes) }
        trimmer.released(bytes)
    }

    var reserved: Int { state.withLock { $0 } }

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

/// Gives the heap's free pages back to the kernel once, when a burst of requests is over: when
/// every budget sharing it (the memory budget and the upload spool's) holds nothing, and at least
/// `trimAfter` bytes went through them since the last trim. One trimmer for both, so a burst of
/// spooled uploads whose decodes outlast the memory budget's last share is trimmed at its end,
/// not at the memory budget's idle moment in the middle of it.
final class HeapTrimmer: Sendable {
    private struct State {
        var reserved = 0
        /// Bytes reserved since the heap was last trimmed.
        var churn = 0
    }
    private let state = Mutex(State())
    /// A burst smaller than this is not worth a trim.
    private let trimAfter: Int
    /// Called outside the lock.
    private let trim: @Sendable () -> Void

    init(trimAfter: Int = 64 << 20, trim: @escaping @Sendable () -> Void = { HeapTuning.releaseFreeMemory() }) {
        self.trimAfter = trimAfter
        self.trim = trim
    }

    func reserved(_ bytes: Int) {
        state.withLock { state in
            state.reserved += bytes
            state.churn += bytes
        }
    }

    func released(_ bytes: Int) {
        let idle = state.withLock { state -> Bool in
            state.reserved = max(0, state.reserved - bytes)
            guard state.reserved == 0, state.churn >= trimAfter else { return false }
            state.churn = 0
            return true
        }
        if idle { trim() }
    }
}
