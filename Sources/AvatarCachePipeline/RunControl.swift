import Foundation
import Synchronization

/// Lets a run be stopped from outside (SIGINT, SIGTERM): no new source is started,
/// what is in flight finishes (each has its timeout), and the cache is saved.
public final class RunControl: Sendable {
    private let reason = Mutex<String?>(nil)
    private let actions = Mutex<[@Sendable (String) -> Void]>([])

    public init() {}

    public func stop(_ why: String) {
        reason.withLock { $0 = $0 ?? why }
        for action in actions.withLock({ $0 }) { action(why) }
    }

    /// Runs `action` when the run stops (at once if it has): what waits without a timeout
    /// of its own (a host's hold) lets go.
    func onStop(_ action: @escaping @Sendable (String) -> Void) {
        actions.withLock { $0.append(action) }
        if let why = stopReason { action(why) }
    }

    public var stopReason: String? { reason.withLock { $0 } }
    public var isStopping: Bool { stopReason != nil }
}

/// Progress of a run, for a progress bar.
public struct RunProgress: Sendable {
    public var done: Int
    public var total: Int
    public var stage: String
}
