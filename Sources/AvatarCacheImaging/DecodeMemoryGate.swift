import Foundation

/// Bounds the memory that decodes in progress may hold together. A 12 MP HEIC holds
/// 72 MB while it decodes, a progressive 12 MP JPEG 19 MB of compact coefficients (72 MB
/// at 4:4:4 in libjpeg's own arrays: two of those at once took a run's peak memory past
/// 250 MB before they were kept compactly). A decode that would take the total over
/// the budget waits for others to finish; one larger than the whole budget runs alone.
///
/// On a `DecodeWorkerPool` thread, a decode that does not fit does not wait there: it is
/// deferred (`Deferred`), its thread takes the next job (a small photo decodes beside a
/// large one instead of queueing behind it), and the pool runs it again once its bytes
/// fit (`withReservationOrDeferral`). Elsewhere it waits.
public final class DecodeMemoryGate: @unchecked Sendable {
    public let budgetBytes: Int64
    private let condition = NSCondition()
    private var inUse: Int64 = 0
    /// Called after every release, outside the lock (the pool looks again for a deferred
    /// job that now fits).
    private var released: [@Sendable () -> Void] = []

    public init(budgetBytes: Int64) {
        self.budgetBytes = max(1, budgetBytes)
    }

    /// A decode that needs `bytes` and did not fit: run it again when `fits(bytes)`.
    public struct Deferred: Error {
        public let bytes: Int64
    }

    /// Whether `bytes` fit now (or nothing else is decoding).
    public func fits(_ bytes: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return inUse == 0 || inUse + bytes <= budgetBytes
    }

    /// Calls `body` after every release.
    func onRelease(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        released.append(body)
        condition.unlock()
    }

    /// Runs `work` once `bytes` fit in the budget (or nothing else is decoding), waiting
    /// for them.
    public func withReservation<T>(_ bytes: Int64, _ work: () throws -> T) rethrows -> T {
        waitToReserve(max(0, bytes))
        defer { release(max(0, bytes)) }
        return try work()
    }

    /// The same, but on a pool thread (`DecodeWorkerPool.onPoolThread`) a decode that
    /// does not fit throws `Deferred` instead of waiting, and its thread takes other work.
    public func withReservationOrDeferral<T>(_ bytes: Int64, _ work: () throws -> T) throws -> T {
        try reserve(max(0, bytes), deferring: DecodeWorkerPool.onPoolThread)
        defer { release(max(0, bytes)) }
        return try work()
    }

    private func waitToReserve(_ bytes: Int64) {
        condition.lock()
        while inUse > 0 && inUse + bytes > budgetBytes { condition.wait() }
        inUse += bytes
        condition.unlock()
    }

    private func reserve(_ bytes: Int64, deferring: Bool) throws(Deferred) {
        guard deferring else { return waitToReserve(bytes) }
        condition.lock()
        defer { condition.unlock() }
        guard inUse == 0 || inUse + bytes <= budgetBytes else { throw Deferred(bytes: bytes) }
        inUse += bytes
    }

    private func release(_ bytes: Int64) {
        condition.lock()
        inUse -= bytes
        condition.broadcast()
        let observers = released
        condition.unlock()
        for observer in observers { observer() }
    }

    /// Bytes reserved now (for tests).
    public var reserved: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return inUse
    }
}
