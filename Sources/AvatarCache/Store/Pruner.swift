import Foundation
import GRDB

/// Least-recently-used eviction, the PRD's shape: when the cache is over its budget,
/// drop the entries accessed longest ago until it is at or under `budget × trimRatio`.
/// A file another remaining entry still uses is never deleted.
///
/// Runs inside the caller's write transaction, oldest first by the index on
/// `lastAccess`: the files it frees are deleted from disk only after the commit.
public struct Pruner: Sendable {
    /// Cache budget in bytes. Default 100 MB.
    public var budgetBytes: Int64
    /// Fraction of the budget to trim down to once over it. Default 0.8.
    public var trimRatio: Double

    public init(budgetBytes: Int64 = 100_000_000, trimRatio: Double = 0.8) {
        self.budgetBytes = budgetBytes
        self.trimRatio = trimRatio
    }

    public struct Plan: Sendable {
        /// Keys of the evicted entries, oldest first.
        public var evicted: [String] = []
        /// Files no remaining entry references; delete them after the commit.
        public var filesToDelete: [String] = []
        /// Bytes of the index's files before the prune.
        public var bytesBefore: Int64 = 0
        /// Bytes of the files the eviction frees.
        public var freedBytes: Int64 = 0
        public var bytesAfter: Int64 { bytesBefore - freedBytes }
    }

    /// Evicts in `db`'s transaction.
    func prune(_ db: Database) throws -> Plan {
        var plan = Plan()
        plan.bytesBefore = try EntryRecords.cacheBytes(db)
        guard plan.bytesBefore > budgetBytes else { return plan }
        let target = Int64((Double(budgetBytes) * trimRatio).rounded(.down))
        var remaining = plan.bytesBefore
        while remaining > target {
            let oldest = try EntryRecords.leastRecentlyUsed(db, limit: 512)
            guard !oldest.isEmpty else { break }
            for key in oldest {
                if remaining <= target { break }
                plan.evicted.append(key)
                for file in try EntryRecords.delete(db, key: key) {
                    plan.filesToDelete.append(file.filename)
                    remaining -= file.fileSize
                }
            }
        }
        plan.freedBytes = plan.bytesBefore - remaining
        return plan
    }
}
