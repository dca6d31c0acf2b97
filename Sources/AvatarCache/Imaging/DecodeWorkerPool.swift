import CVips
import Foundation

/// A fixed set of threads we own for libvips work.
///
/// libvips work is blocking C code: it must not run on Swift's cooperative pool, and
/// every thread that has used libvips must call `vips_thread_shutdown()` before it
/// ends, or libvips leaks per-thread buffers. So decoding runs here, one image per
/// thread, as many threads as cores, and `run` suspends the caller until done.
public final class DecodeWorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [() -> Void] = []
    private var stopping = false
    private var running = 0
    public let threadCount: Int

    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        threadCount = max(1, threads)
        for index in 0..<threadCount {
            let thread = Thread { self.workLoop() }
            thread.name = "avatar-cache.decode.\(index)"
            thread.stackSize = 8 << 20
            running += 1
            thread.start()
        }
    }

    /// Runs `work` on a pool thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            queue.append {
                continuation.resume(with: Result { try work() })
            }
            condition.signal()
            condition.unlock()
        }
    }

    /// Lets the queued work finish, then ends the threads. Blocks until they have ended.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func workLoop() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                running -= 1
                condition.broadcast()
                condition.unlock()
                vips_thread_shutdown()
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            job()
        }
    }
}
