#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// State that threads sleep on until another changes it: what `Mutex` cannot do, since it has no wait. Everything else
/// locks with `Synchronization.Mutex`; this is the one other primitive (scripts/check-targets).
///
///     let slots = ThreadCondition(2)
///     slots.withLock { held in
///         while held.state == 0 { held.wait() }
///         held.state -= 1
///     }
///     slots.withLock { held in held.state += 1; held.signal() }
///
/// It blocks the calling thread: the decode and file threads we own wait on it for work
/// and memory; the read stage (on the run's task) waits on it only while the index's
/// writer still has two batches of records to write.
package final class ThreadCondition<State> {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let storage = UnsafeMutablePointer<State>.allocate(capacity: 1)

    package init(_ initial: State) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        storage.initialize(to: initial)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The state while the lock is held, changed in place, with the wait and the wake-ups.
    package struct Held: ~Copyable {
        fileprivate let owner: ThreadCondition

        package var state: State {
            unsafeAddress { UnsafePointer(owner.storage) }
            nonmutating unsafeMutableAddress { owner.storage }
        }

        /// Releases the lock, sleeps until woken (`signal`, `broadcast`; or spuriously:
        /// look at the state again), and takes the lock again.
        package func wait() { pthread_cond_wait(owner.condition, owner.mutex) }

        /// Wakes one sleeping thread.
        package func signal() { pthread_cond_signal(owner.condition) }

        /// Wakes every sleeping thread.
        package func broadcast() { pthread_cond_broadcast(owner.condition) }
    }

    /// Runs `body` with the lock held.
    package func withLock<R, E: Error>(_ body: (borrowing Held) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(Held(owner: self))
    }
}

// Why @unchecked: `state` is guarded by a pthread mutex and condition, C handles whose
// guarding the compiler cannot see; they are reached only through `withLock`. Shared
// between threads only when the state itself may be.
extension ThreadCondition: @unchecked Sendable where State: Sendable {}
