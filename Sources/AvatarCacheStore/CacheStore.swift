import AvatarCacheModel
import Foundation
import Logging

/// What each command asks of a cache, by intent: the one way into the store from above.
/// Behind it the store keeps its index (GRDB, `CacheIndex`), its writer and its lock;
/// no database type crosses this line.
///
/// - `warm` and `run`: `openRun` (a `CacheSession`, whose `store` is the run's `RunStore`)
/// - `merge`: `merge`
/// - `verify` (and `--repair`): `verify`
/// - `prune`: `prune`
/// - `stats`: `statistics`
/// - `lookup` of a cache written before the index: `importOlderCache`
public enum CacheStore {
    /// Takes the lock (waiting up to `wait` seconds), marks the run as begun and opens the
    /// index, making the cache when there is none: the session a warm works in.
    package static func openRun(_ directory: CacheDirectory, wait: TimeInterval, logger: Logger) throws -> CacheSession {
        try CacheSession.open(directory, wait: wait, create: true, markRun: true, logger: logger)
    }

    /// Evicts least-recently-used entries down to the pruner's target, under the lock; the
    /// budget and trim ratio given become the cache's own, those not given are its own
    /// (`PruneOutcome.pruner` says which were used).
    public static func prune(_ directory: CacheDirectory, pruner: Pruner, wait: TimeInterval, logger: Logger) throws -> PruneOutcome {
        let session = try CacheSession.open(directory, wait: wait, create: false, logger: logger)
        defer { session.close() }
        return try session.finish(pruner: pruner, entriesChanged: false)
    }

    /// What `verify` found: a note for a first run killed before it saved anything, or the
    /// check's result.
    public enum Verification: Sendable {
        case interruptedFirstRun(note: String)
        case checked(CacheVerifier.Result)
    }

    /// Checks every entry's files, the unreferenced files and the totals, under the lock;
    /// with `repair`, fixes what can be fixed (CacheVerifier). Without `budgetBytes`, the
    /// cache's own budget; one given is for this check alone.
    public static func verify(_ directory: CacheDirectory, budgetBytes: Int64?, repair: Bool, wait: TimeInterval,
                              logger: Logger) throws -> Verification {
        if let note = CacheVerifier.interruptedFirstRun(directory) { return .interruptedFirstRun(note: note) }
        return .checked(try CacheVerifier(directory: directory).verify(budgetBytes: budgetBytes, repair: repair, wait: wait, logger: logger))
    }

    /// Merges caches into `target` (made when missing) and prunes it once (CacheMerge), to
    /// the budget given, else the target's own, else the one its sources keep.
    public static func merge(_ sources: [CacheDirectory], into target: CacheDirectory, pruner: Pruner, wait: TimeInterval,
                             logger: Logger) throws -> CacheMerge.Outcome {
        try CacheMerge.merge(sources, into: target, pruner: pruner, wait: wait, logger: logger)
    }

    /// Entries, bytes by tier, access times and budget use, read without the lock; against
    /// `budgetBytes` when given, else the cache's own budget.
    public static func statistics(_ directory: CacheDirectory, budgetBytes: Int64? = nil) throws -> CacheStatistics {
        try CacheStatistics.of(directory, budgetBytes: budgetBytes)
    }

    /// The whole index as one value (every entry, profile and failure), read without the lock.
    package static func snapshot(_ directory: CacheDirectory) throws -> CacheMetadata {
        let index = try CacheIndex.openExisting(directory)
        defer { index.close() }
        return try index.snapshot()
    }

    /// Imports a cache written before the index (its metadata.json) into a new index,
    /// under the lock, so that a reader of the index finds it.
    public static func importOlderCache(_ directory: CacheDirectory) throws {
        try CacheIndex.openExisting(directory).close()
    }
}
