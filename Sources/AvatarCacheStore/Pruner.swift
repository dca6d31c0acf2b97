import Foundation
internal import GRDB

/// Least-recently-used eviction, as the apps' cache does it, monograms before photos: when
/// the cache is over its budget, drop monograms, then photos, each kind accessed longest
/// ago first, until it is at or under `budget × trimRatio`. A monogram is drawn again
/// from the index by the next run without the network; a photo is not. A file another
/// remaining entry still uses is never deleted.
///
/// Runs inside the caller's write transaction, in that order along the index
/// `entry_by_eviction`: the files it frees are deleted from disk only after the commit.
public struct Pruner: Sendable {
    /// The budget every command starts from (`--budget`): 100 MB (the apps' own cache budget).
    public static let defaultBudgetBytes: Int64 = 100_000_000
    /// The fraction trimmed down to (`--trim-ratio`): 0.8 (as the apps' own cache).
    public static let defaultTrimRatio = 0.8
    /// The trim ratios accepted (`Settings.trimRatio`).
    public static let trimRatioRange = 0.01...1.0

    /// Where a budget or trim ratio came from: given to this command (a flag, a pipeline
    /// file's key), kept by the cache (the last writer given one recorded it), or the default.
    public enum Origin: String, Codable, Sendable {
        case given, cache, `default`

        /// How a report says where the budget came from, after "of 20.00 GB"; empty when given.
        public var inWords: String {
            switch self {
            case .given: ""
            case .cache: " (the cache's budget)"
            case .default: " (the default budget)"
            }
        }
    }

    /// Cache budget in bytes. Setting it gives it (`budgetOrigin` becomes `.given`).
    public var budgetBytes: Int64 {
        get { budget }
        set { budget = newValue; budgetOrigin = .given }
    }
    /// Fraction of the budget to trim down to once over it. Setting it gives it.
    public var trimRatio: Double {
        get { ratio }
        set { ratio = newValue; trimRatioOrigin = .given }
    }
    public private(set) var budgetOrigin = Origin.default
    public private(set) var trimRatioOrigin = Origin.default
    private var budget: Int64
    private var ratio: Double

    /// The budget and trim ratio given to a command; each one not given (nil) is the
    /// cache's own where it keeps one, else the default (`kept(_:recording:)`).
    public init(budgetBytes: Int64? = nil, trimRatio: Double? = nil) {
        budget = Self.defaultBudgetBytes
        ratio = Self.defaultTrimRatio
        if let budgetBytes { self.budgetBytes = budgetBytes }
        if let trimRatio { self.trimRatio = trimRatio }
    }

    /// The cache's budget: in `db`, the values this pruner was not given are those the
    /// cache keeps (recorded by the last writer given them), else the defaults; with
    /// `recording` (a writer: warm, run, prune, merge), the values it was given become
    /// the ones the cache keeps.
    func kept(_ db: Database, recording: Bool) throws -> Pruner {
        var kept = self
        if budgetOrigin == .given {
            if recording { try CacheSettings.set(db, CacheSettings.budget, to: String(budget)) }
        } else if let recorded = try CacheSettings.value(db, CacheSettings.budget).flatMap(Int64.init), recorded > 0 {
            kept.budget = recorded
            kept.budgetOrigin = .cache
        }
        if trimRatioOrigin == .given {
            if recording { try CacheSettings.set(db, CacheSettings.trimRatio, to: String(ratio)) }
        } else if let recorded = try CacheSettings.value(db, CacheSettings.trimRatio).flatMap(Double.init),
                  Self.trimRatioRange.contains(recorded) {
            kept.ratio = recorded
            kept.trimRatioOrigin = .cache
        }
        return kept
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

    /// The entries in the order they are evicted, each with its files (a file once per
    /// tier that uses it): along the index `entry_by_eviction`, without a sort, so the walk
    /// reads only as far as it evicts.
    static let evictionOrderSQL = """
        SELECT e.key, f.filename, f.fileSize FROM entry e JOIN entryFile f ON f.entryKey = e.key
        ORDER BY \(CacheIndex.evictionOrder.map { "e." + $0 }.joined(separator: ", "))
        """

    /// Evicts in `db`'s transaction: first decides, walking the entries oldest first with
    /// their files (the index on `lastAccess`) and counting each file's remaining users,
    /// then deletes the chosen entries in one statement.
    func prune(_ db: Database) throws -> Plan {
        var plan = Plan()
        plan.bytesBefore = try EntryRecords.cacheBytes(db)
        guard plan.bytesBefore > budgetBytes else { return plan }
        let target = Int64((Double(budgetBytes) * trimRatio).rounded(.down))
        var remaining = plan.bytesBefore
        // Users left of each file met so far (entries, each counted once).
        var users: [String: Int] = [:]
        let usersOf = try db.cachedStatement(sql: "SELECT COUNT(DISTINCT entryKey) FROM entryFile WHERE filename = ?")
        // Monograms first (the index `entry_by_eviction`): a run draws one again from the
        // index in milliseconds, while a photo costs a download that may fail. Then photos,
        // each kind least recently used first.
        let oldestFirst = try Row.fetchCursor(db, sql: Self.evictionOrderSQL)
        var current: String?
        // The current entry's files met so far (its tiers may share one).
        var filesOfCurrent: Set<String> = []
        while let row = try oldestFirst.next() {
            let key: String = row["key"]
            if key != current {
                // The previous entry is decided; stop before the next once under target.
                if remaining <= target { break }
                current = key
                filesOfCurrent.removeAll(keepingCapacity: true)
                plan.evicted.append(key)
            }
            let file: String = row["filename"]
            guard filesOfCurrent.insert(file).inserted else { continue }
            let left: Int
            if let known = users[file] {
                left = known - 1
            } else {
                left = (try Int.fetchOne(usersOf, arguments: [file]) ?? 0) - 1
            }
            users[file] = left
            if left == 0 {
                plan.filesToDelete.append(file)
                remaining -= row["fileSize"] as Int64
            }
        }
        // The evicted keys go to a temporary table, then one statement deletes them.
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS evict (key TEXT PRIMARY KEY) WITHOUT ROWID; DELETE FROM temp.evict")
        let add = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.evict (key) VALUES (?)")
        for key in plan.evicted { try add.execute(arguments: [key]) }
        try db.execute(sql: "DELETE FROM entry WHERE key IN (SELECT key FROM temp.evict); DELETE FROM temp.evict")
        plan.freedBytes = plan.bytesBefore - remaining
        return plan
    }
}
