import AvatarCacheSupport
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
public final class DecodeMemoryGate: Sendable {
    public let budgetBytes: Int64
    private struct State {
        var inUse: Int64 = 0
        /// Called after every release, outside the lock (the pool looks again for a
        /// deferred job that now fits).
        var released: [@Sendable () -> Void] = []
    }
    private let state = ThreadCondition(State())

    public init(budgetBytes: Int64) {
        self.budgetBytes = max(1, budgetBytes)
    }

    /// A decode that needs `bytes` and did not fit: run it again when `fits(bytes)`.
    public struct Deferred: Error {
        public let bytes: Int64
    }

    /// Whether `bytes` fit now (or nothing else is decoding).
    public func fits(_ bytes: Int64) -> Bool {
        state.withLock { held in held.state.inUse == 0 || held.state.inUse + bytes <= budgetBytes }
    }

    /// Calls `body` after every release.
    func onRelease(_ body: @escaping @Sendable () -> Void) {
        state.withLock { held in held.state.released.append(body) }
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
        state.withLock { held in
            while held.state.inUse > 0 && held.state.inUse + bytes > budgetBytes { held.wait() }
            held.state.inUse += bytes
        }
    }

    private func reserve(_ bytes: Int64, deferring: Bool) throws(Deferred) {
        guard deferring else { return waitToReserve(bytes) }
        try state.withLock { (held) throws(Deferred) in
            guard held.state.inUse == 0 || held.state.inUse + bytes <= budgetBytes else { throw Deferred(bytes: bytes) }
            held.state.inUse += bytes
        }
    }

    private func release(_ bytes: Int64) {
        let observers = state.withLock { held in
            held.state.inUse -= bytes
            held.broadcast()
            return held.state.released
        }
        for observer in observers { observer() }
    }

    /// Bytes reserved now (for tests).
    public var reserved: Int64 {
        state.withLock { held in held.state.inUse }
    }
}
