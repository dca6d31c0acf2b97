import Foundation

/// Bounds the memory that decodes in progress may hold together. A progressive 12 MP
/// JPEG keeps every DCT coefficient until its last scan (72 MB at 4:4:4), and two of them
/// at once took a run's peak memory past 250 MB. A decode that would take the total over
/// the budget waits for others to finish; one larger than the whole budget runs alone.
///
/// Blocking: called on `DecodeWorkerPool` threads only.
public final class DecodeMemoryGate: @unchecked Sendable {
    public let budgetBytes: Int64
    private let condition = NSCondition()
    private var inUse: Int64 = 0

    public init(budgetBytes: Int64) {
        self.budgetBytes = max(1, budgetBytes)
    }

    /// Runs `work` once `bytes` fit in the budget (or nothing else is decoding).
    public func withReservation<T>(_ bytes: Int64, _ work: () throws -> T) rethrows -> T {
        let bytes = max(0, bytes)
        condition.lock()
        while inUse > 0 && inUse + bytes > budgetBytes { condition.wait() }
        inUse += bytes
        condition.unlock()
        defer {
            condition.lock()
            inUse -= bytes
            condition.broadcast()
            condition.unlock()
        }
        return try work()
    }

    /// Bytes reserved now (for tests).
    public var reserved: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return inUse
    }
}
