import AvatarCacheSupport
import CVips
import Foundation

/// A fixed set of threads we own for libvips work (and, as a second pool, for the
/// blocking file writes that follow it: `RenderWriter`).
///
/// libvips work is blocking C code: it must not run on Swift's cooperative pool, and
/// every thread that has used libvips must call `vips_thread_shutdown()` before it
/// ends, or libvips leaks per-thread buffers. So decoding runs here, one image per
/// thread, as many threads as cores, and `run` suspends the caller until done.
///
/// With a `DecodeMemoryGate`: a job the gate defers (a large decode while others hold
/// the memory) goes back to the queue, marked with the bytes it needs, and its thread
/// takes the next job; a marked job is taken only when its bytes fit. No thread waits for
/// memory while there is work that fits; when one does, the pool says so (`tellStarving`),
/// so that the downloads can bring work that fits.
public final class DecodeWorkerPool: Sendable {
    private struct Job {
        /// Bytes the job's decode needs, once known (it was deferred); nil: any time.
        var needs: Int64?
        var work: @Sendable () -> Void
    }

    /// What the threads share, under the condition they sleep on.
    private struct State {
        var queue: [Job] = []
        var stopping = false
        var running = 0
        /// Waits that have ended, and each thread's wait in progress (when it began, and
        /// whether jobs were queued: a job queued ends one thread's wait, a deferred one or
        /// a release of the gate's memory every thread's).
        var idleNanoseconds = (noWork: UInt64(0), noMemory: UInt64(0))
        var waits: [(since: UInt64, queued: Bool)?]
        /// Time the threads spent running jobs, and the jobs run: their mean, `meanJobSeconds`.
        var busy = (nanoseconds: UInt64(0), jobs: 0)
        /// What was last told: a thread waits while every queued job waits for memory.
        var starving = false
        var starvingSequence = 0
        var onStarving: (@Sendable (_ starving: Bool, _ sequence: Int) -> Void)?

        /// Tells whether a thread now waits with jobs queued (its wait in `waits`), if that changed.
        mutating func tellIfStarvingChanged() {
            let now = waits.contains { $0?.queued == true }
            guard now != starving else { return }
            starving = now
            starvingSequence += 1
            onStarving?(now, starvingSequence)
        }
    }

    private let state: ThreadCondition<State>
    public let threadCount: Int
    private let gate: DecodeMemoryGate?

    /// Whether this thread is one of a pool's (a gate defers rather than waits there).
    static var onPoolThread: Bool { Thread.current.threadDictionary[poolThreadKey] != nil }
    private static let poolThreadKey = "avatar-cache.decode-pool"

    /// `name` names the threads (`avatar-cache.<name>.<n>`), for `top -H` and profiles.
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, gate: DecodeMemoryGate? = nil, name: String = "decode") {
        threadCount = max(1, threads)
        self.gate = gate
        state = ThreadCondition(State(waits: Array(repeating: nil, count: threadCount)))
        // Its threads end with `vips_thread_shutdown()`, which needs libvips set up even
        // when no job ever ran (a pool used alone crashed there); a set-up failure shows
        // in the first job that uses libvips.
        _ = try? Vips.initialise()
        state.withLock { held in held.state.running = threadCount }
        for index in 0..<threadCount {
            let thread = Thread { self.workLoop(index) }
            thread.name = "avatar-cache.\(name).\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
        gate?.onRelease { [weak self] in
            self?.state.withLock { held in held.broadcast() }
        }
    }

    /// Runs `work` on a pool thread and returns its result; a deferral by the gate runs
    /// it again when its bytes fit.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        var needs: Int64?
        while true {
            do {
                return try await enqueue(needs: needs, work)
            } catch let deferred as DecodeMemoryGate.Deferred {
                needs = deferred.bytes
            }
        }
    }

    private func enqueue<T: Sendable>(needs: Int64?, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(needs: needs) { continuation.resume(with: Result { try work() }) }
            state.withLock { held in
                // A deferred job is older than what was queued since: it goes first.
                // A new job wakes one thread (each wakes for the one it takes, not every
                // thread for each job); a deferred one, which only some may run, all of
                // them, and so does any job once `shutdown` waits on the same condition.
                if needs != nil {
                    held.state.queue.insert(job, at: 0)
                } else {
                    held.state.queue.append(job)
                }
                if needs != nil || held.state.stopping { held.broadcast() } else { held.signal() }
            }
        }
    }

    /// `tell(true, n)` when a thread starts waiting with only jobs queued that wait for
    /// memory, `tell(false, n)` when no thread does any more; `n` grows with each call, so
    /// that calls handed on out of order can be told apart. Nil: nobody is told.
    public func tellStarving(_ tell: (@Sendable (_ starving: Bool, _ sequence: Int) -> Void)?) {
        state.withLock { held in held.state.onStarving = tell }
    }

    /// The seconds the pool's threads have waited so far, added up over the threads:
    /// with nothing queued (`noWork`: the downloads did not keep up), and with jobs
    /// queued that all wait for decode memory (`noMemory`).
    public var idleSeconds: (noWork: Double, noMemory: Double) {
        state.withLock { held in
            var total = held.state.idleNanoseconds
            let now = DispatchTime.now().uptimeNanoseconds
            for case let wait? in held.state.waits {
                if wait.queued { total.noMemory += now - wait.since } else { total.noWork += now - wait.since }
            }
            return (Double(total.noWork) / 1e9, Double(total.noMemory) / 1e9)
        }
    }

    /// The mean time a job has taken on a thread so far (nil before the first).
    public var meanJobSeconds: Double? {
        state.withLock { held in
            held.state.busy.jobs == 0 ? nil : Double(held.state.busy.nanoseconds) / Double(held.state.busy.jobs) / 1e9
        }
    }

    /// A job of the pool's kind done on the caller's thread (an account photo,
    /// `AvatarRenderer.renderAccountPhoto`), counted in `meanJobSeconds`.
    public func count(jobOf nanoseconds: UInt64) {
        state.withLock { held in
            held.state.busy.nanoseconds += nanoseconds
            held.state.busy.jobs += 1
        }
    }

    /// Lets the queued work finish, then ends the threads. Blocks until they have ended.
    public func shutdown() {
        state.withLock { held in
            held.state.stopping = true
            held.broadcast()
            while held.state.running > 0 { held.wait() }
        }
    }

    /// The first queued job that may run now: any not deferred, or a deferred one whose
    /// bytes fit.
    private static func nextRunnable(_ queue: [Job], gate: DecodeMemoryGate?) -> Int? {
        queue.firstIndex { job in job.needs.map { gate?.fits($0) ?? true } ?? true }
    }

    private func workLoop(_ thread: Int) {
        Thread.current.threadDictionary[Self.poolThreadKey] = true
        let gate = gate
        while true {
            let job: Job? = state.withLock { held in
                var index = Self.nextRunnable(held.state.queue, gate: gate)
                while index == nil && !(held.state.queue.isEmpty && held.state.stopping) {
                    // Woken by a new job or a release of the gate's memory.
                    let wait = (since: DispatchTime.now().uptimeNanoseconds, queued: !held.state.queue.isEmpty)
                    held.state.waits[thread] = wait
                    held.state.tellIfStarvingChanged()
                    held.wait()
                    held.state.waits[thread] = nil
                    held.state.tellIfStarvingChanged()
                    let waited = DispatchTime.now().uptimeNanoseconds - wait.since
                    if wait.queued { held.state.idleNanoseconds.noMemory += waited } else { held.state.idleNanoseconds.noWork += waited }
                    index = Self.nextRunnable(held.state.queue, gate: gate)
                }
                guard let index else {
                    held.state.running -= 1
                    held.broadcast()
                    return nil
                }
                return held.state.queue.remove(at: index)
            }
            guard let job else {
                vips_thread_shutdown()
                return
            }
            let started = DispatchTime.now().uptimeNanoseconds
            job.work()
            let took = DispatchTime.now().uptimeNanoseconds - started
            state.withLock { held in
                held.state.busy.nanoseconds += took
                held.state.busy.jobs += 1
            }
        }
    }
}
