import Foundation

/// Least-recently-used eviction, the PRD's shape: when the cache is over its budget,
/// drop the entries accessed longest ago until it is at or under `budget × trimRatio`.
/// A file another remaining entry still uses is never deleted.
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
        /// The metadata without the evicted entries.
        public var metadata: CacheMetadata
        /// URLs of the evicted entries, oldest first.
        public var evicted: [String]
        /// Files no remaining entry references; delete them after saving `metadata`.
        public var filesToDelete: [String]
        /// Bytes counted toward the budget before the prune.
        public var bytesBefore: Int64
        /// Bytes of the files the eviction frees.
        public var freedBytes: Int64
    }

    /// Plans the eviction. `files` is the directory listing: all of it counts toward the
    /// budget, whether an entry references it or not.
    public func plan(_ metadata: CacheMetadata, files: [(name: String, size: Int64)]) -> Plan {
        let total = files.reduce(Int64(0)) { $0 + $1.size }
        var plan = Plan(metadata: metadata, evicted: [], filesToDelete: [], bytesBefore: total, freedBytes: 0)
        guard total > budgetBytes else { return plan }
        let target = Int64((Double(budgetBytes) * trimRatio).rounded(.down))
        var sizes: [String: Int64] = [:]
        sizes.reserveCapacity(files.count)
        for file in files { sizes[file.name] = file.size }
        // Entries using each file, counted once per entry: tiers of a source smaller than
        // the smallest tier share one file (counting them per tier kept such files alive,
        // and the prune went on evicting everything).
        var references: [String: Int] = [:]
        for entry in metadata.entries.values {
            for file in entry.distinctFilenames { references[file, default: 0] += 1 }
        }
        // Oldest access first; the URL breaks ties so the order is the same every run.
        let oldestFirst = metadata.entries.sorted {
            $0.value.lastAccess != $1.value.lastAccess ? $0.value.lastAccess < $1.value.lastAccess : $0.key < $1.key
        }
        var remaining = total
        for (url, entry) in oldestFirst {
            if remaining <= target { break }
            plan.metadata.entries[url] = nil
            plan.evicted.append(url)
            for file in entry.distinctFilenames {
                references[file, default: 1] -= 1
                if references[file] == 0 {
                    plan.filesToDelete.append(file)
                    remaining -= sizes[file] ?? 0
                }
            }
        }
        plan.freedBytes = total - remaining
        return plan
    }
}
