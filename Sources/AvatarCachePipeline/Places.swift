import Synchronization

/// At most `limit` holders at once, taken without waiting: `take` says whether a place
/// was free (and takes it), `release` gives one back.
final class Places: Sendable {
    let limit: Int
    private let taken = Atomic<Int>(0)

    init(_ limit: Int) { self.limit = limit }

    func take() -> Bool {
        var current = taken.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = taken.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() { taken.subtract(1, ordering: .acquiringAndReleasing) }
}
