import Foundation

/// The access time a run records for what its profiles show, the one rule both the
/// run (each result it commits) and the store (every cached entry of the run's sources at
/// once, in SQL) apply: the run's start, a millisecond earlier per rank, so that the first
/// in priority order count as the most recently used when the budget cannot hold everyone.
package enum AccessTime {
    /// Ranks per second: a millisecond between neighbours.
    static let ranksPerSecond = 1000.0

    /// The access time of a source of `rank` in a run started at `started`.
    package static func of(rank: Int, runStartedAt started: Date) -> Date {
        started.addingTimeInterval(-Double(rank) / ranksPerSecond)
    }

    /// The same, in SQL: `started` and `rank` are SQL expressions (the start as the
    /// index stores dates, seconds since 1970).
    static func sql(started: String, rank: String) -> String {
        "\(started) - \(rank) / \(ranksPerSecond)"
    }
}
