import Foundation

/// Lets a run be stopped from outside (SIGINT, SIGTERM): no new source is started,
/// what is in flight finishes (each has its timeout), and the cache is saved.
public final class RunControl: @unchecked Sendable {
    private let lock = NSLock()
    private var reason: String?

    public init() {}

    public func stop(_ why: String) {
        lock.withLock { if reason == nil { reason = why } }
    }

    public var stopReason: String? { lock.withLock { reason } }
    public var isStopping: Bool { stopReason != nil }
}

/// Progress of a run, for a progress bar.
public struct RunProgress: Sendable {
    public var done: Int
    public var total: Int
    public var stage: String
}
