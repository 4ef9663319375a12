#if canImport(Glibc)
import Glibc
#endif

/// Wakes threads that wait for a condition on state kept elsewhere (the pool's `Mutex`), so
/// that they sleep instead of polling.
///
/// A waiter checks its condition with the signal's own lock held, and a change is signalled
/// after it was made, under that lock: a change between the check and the sleep cannot be
/// missed. Only threads of the pool's own (decodes, background reaping) wait here; async
/// callers reach them through ``NukeCore/BlockingWorkQueue``.
///
/// `@unchecked Sendable`: the mutex and condition live in memory allocated once and freed in
/// `deinit`; every use goes through `pthread_mutex_lock`/`pthread_cond_*`, which is what makes
/// sharing them between threads safe.
final class StateSignal: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Wakes every waiter to check its condition again. Call after changing the state.
    func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Sleeps until `condition` holds or `timeout` passes; `true` when it holds.
    @discardableResult
    func wait(timeout: Duration? = nil, until condition: () -> Bool) -> Bool {
        var deadline = timespec()
        if let timeout {
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
            deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !condition() {
            if timeout == nil {
                pthread_cond_wait(self.condition, mutex)
            } else if pthread_cond_timedwait(self.condition, mutex, &deadline) == ETIMEDOUT {
                return condition()
            }
        }
        return true
    }
}
