import AvatarCacheModel
import AvatarCacheSupport
import Foundation
internal import GRDB
import Logging

/// `avatar-cache merge`: the union of several caches (the shards of a split run) in one.
///
///     lock every source -> lock the target -> for each source, in one transaction with
///       its index attached: drop what it brought before and no longer has; take its
///       entries (newest access wins; its own earlier version is replaced; the same
///       content only refreshed), profiles (between shards of one split the record read
///       last, else the newest update) and failures (the newest); link or copy the files
///       the taken entries use (one file per content: names are content hashes)
///     -> one prune -> metadata.json -> delete what nothing references -> unlock
///
/// The prune keeps the budget given (which the target then keeps), else the target's own,
/// else, for a target that keeps none (a new one), the largest its sources keep, which the
/// target then keeps: shards warmed with `--budget 1GB` merge into a cache of 1 GB.
///
/// Every row taken is claimed by its source's origin (`shard i/n`, or `cache <id>` for a
/// cache that is not a shard), so merging a re-run shard again replaces what it brought
/// before, and a merge that brings every shard of a split (0/n … n−1/n) replaces what
/// shards of another split brought. A kill at any instant leaves the target consistent
/// (files are linked before the commit that uses them; at worst orphans, swept later).
public enum CacheMerge {
    public struct SourceOutcome: Sendable {
        public var path: String
        /// `shard i/n` or `cache <id>`.
        public var origin: String
        public var entriesTaken = 0
        /// Of those, entries the target did not have.
        public var entriesNew = 0
        /// Entries whose content the target had: only their validators and access updated.
        public var entriesRefreshed = 0
        /// Entries the target kept as they were: the same, or its own access was newer.
        public var entriesKept = 0
        /// Entries skipped because a file they use is missing from the source.
        public var entriesMissingFiles = 0
        /// Entries and profiles this origin had brought before and no longer has.
        public var entriesDropped = 0
        public var profilesTaken = 0
        public var profilesDropped = 0
        public var failuresTaken = 0
        public var filesLinked = 0
        public var filesCopied = 0
    }

    public struct Outcome: Sendable {
        public var sources: [SourceOutcome]
        /// Origins of another split that a complete split replaced.
        public var supersededOrigins: [String]
        public var finish: PruneOutcome
        public var entries: Int
        public var profiles: Int
    }

    /// The rows a merge claims: kind, table, key column.
    static let claimedTables = [("entry", "entry", "key"), ("profile", "profile", "id"), ("failure", "failure", "key")]

    /// A source cache and its origin.
    struct Source {
        var directory: CacheDirectory
        var origin: String
        var shard: Shard?
    }

    static func merge(_ sources: [CacheDirectory], into target: CacheDirectory, budgetBytes: Int64? = nil, trimRatio: Double? = nil,
                             wait: TimeInterval, logger: Logger) throws -> Outcome {
        try merge(sources, into: target, pruner: Pruner(budgetBytes: budgetBytes, trimRatio: trimRatio), wait: wait, logger: logger)
    }

    static func merge(_ sources: [CacheDirectory], into target: CacheDirectory, pruner: Pruner,
                             wait: TimeInterval, logger: Logger) throws -> Outcome {
        guard !sources.isEmpty else { throw ConfigurationError(message: "merge: give at least one cache to merge") }
        let targetPath = canonicalPath(target.root)
        var seen: [String: String] = [:]
        var resolved: [Source] = []
        // The largest budget and trim ratio the sources keep (for a target that keeps none).
        var sourcesBudget = Pruner()
        for source in sources {
            let path = canonicalPath(source.root)
            guard path != targetPath else {
                throw ConfigurationError(message: "merge: \(source.root.path) is the target itself (--into)")
            }
            guard seen[path] == nil else { throw ConfigurationError(message: "merge: \(source.root.path) is given twice") }
            seen[path] = source.root.path
            // Opening it brings an older cache to this version's index (under its lock).
            let index = try CacheIndex.openExisting(source, lockWait: wait, role: .lookup)
            let (id, shardText, kept) = try index.read { db in
                (try CacheSettings.value(db, CacheSettings.id) ?? "", try CacheSettings.value(db, CacheSettings.shard),
                 try Pruner().kept(db, recording: false))
            }
            if kept.budgetOrigin == .cache, sourcesBudget.budgetOrigin != .given || kept.budgetBytes > sourcesBudget.budgetBytes {
                sourcesBudget = Pruner(budgetBytes: kept.budgetBytes, trimRatio: kept.trimRatioOrigin == .cache ? kept.trimRatio : nil)
            }
            index.close()
            let shard = try shardText.map { try Shard(parsing: $0) }
            let origin = shard.map { "shard \($0)" } ?? "cache \(id)"
            if let other = resolved.first(where: { $0.origin == origin }) {
                throw ConfigurationError(message: "merge: \(other.directory.root.path) and \(source.root.path) are both \(origin); a target holds one split run: merge another run's shards into another target")
            }
            resolved.append(Source(directory: source, origin: origin, shard: shard))
        }
        // Every source's lock first (a shard still being warmed is exit 75 before the
        // target is touched), held until the merge is done.
        var locks: [CacheLock] = []
        defer { for lock in locks { lock.release() } }
        for source in resolved { locks.append(try CacheLock.acquire(in: source.directory, wait: wait)) }

        let session = try CacheSession.open(target, wait: wait, create: true, markRun: true, logger: logger)
        defer { session.close() }
        let index = session.index
        // A merge killed before its commit left files linked and not referenced: swept now
        // (the listing is skipped otherwise: a merged cache may hold a million files).
        var orphans = Set<String>()
        if session.previousRunInterrupted {
            let referenced = try index.read { try EntryRecords.allFileNames($0) }
            var listing = try target.listFiles()
            let swept = Set(try target.sweep(keeping: referenced, leftoversOnly: true, in: listing))
            listing.removeAll { swept.contains($0.name) }
            orphans = Set(listing.map(\.name).filter { CacheDirectory.isCacheFileName($0) && !referenced.contains($0) })
        }

        let superseded = try supersededOrigins(resolved, index: index)
        if !superseded.isEmpty {
            try index.write { db in
                for origin in superseded {
                    let claims = try Row.fetchAll(db, sql: "SELECT kind, key FROM mergeClaim WHERE origin = ?", arguments: [origin])
                    var dropped = SourceOutcome(path: "", origin: origin)
                    for claim in claims {
                        try drop(db, origin: origin, kind: claim["kind"], key: claim["key"], session: session, outcome: &dropped)
                    }
                }
            }
            logger.info("a complete split replaced another", metadata: ["replaced": "\(superseded.joined(separator: ", "))"])
        }

        var outcomes: [SourceOutcome] = []
        for source in resolved {
            let outcome = try index.writeAttaching(source.directory, as: "src") { db in
                try mergeOne(db, source: source, into: target, session: session, logger: logger)
            }
            logger.info("merged", metadata: [
                "cache": "\(source.directory.root.path)", "origin": "\(source.origin)",
                "entriesTaken": .stringConvertible(outcome.entriesTaken), "entriesKept": .stringConvertible(outcome.entriesKept),
                "entriesDropped": .stringConvertible(outcome.entriesDropped), "profilesTaken": .stringConvertible(outcome.profilesTaken),
                "filesLinked": .stringConvertible(outcome.filesLinked), "filesCopied": .stringConvertible(outcome.filesCopied),
            ])
            outcomes.append(outcome)
        }
        let changed = !superseded.isEmpty || outcomes.contains { $0.entriesTaken + $0.entriesRefreshed + $0.entriesDropped > 0 }
        var pruner = pruner
        if pruner.budgetOrigin != .given, sourcesBudget.budgetOrigin == .given,
           try index.read({ try Pruner().kept($0, recording: false).budgetOrigin }) != .cache {
            pruner = sourcesBudget
        }
        let finish = try session.finish(pruner: pruner, entriesChanged: changed, orphans: orphans)
        try target.markRunFinished()
        let (entries, profiles) = try index.read { (try EntryRecords.count($0), try ProfileRecords.count($0)) }
        return Outcome(sources: outcomes, supersededOrigins: superseded, finish: finish, entries: entries, profiles: profiles)
    }

    /// Merges one source (attached as `src`) inside the caller's transaction.
    static func mergeOne(_ db: Database, source: Source, into target: CacheDirectory, session: CacheSession,
                         logger: Logger) throws -> SourceOutcome {
        var outcome = SourceOutcome(path: source.directory.root.path, origin: source.origin)
        try dropGone(db, origin: source.origin, session: session, outcome: &outcome)
        try chooseEntries(db, origin: source.origin)
        try bringFiles(db, from: source, into: target, outcome: &outcome, logger: logger)
        try refreshSameContent(db, origin: source.origin, outcome: &outcome)
        try replaceChosenEntries(db, session: session)
        try takeProfilesAndFailures(db, from: source, outcome: &outcome)
        try claimAll(db, origin: source.origin)
        // The decode sizes the source's warm was given: the lookup's tier rule (the last source's).
        try db.execute(sql: "INSERT OR REPLACE INTO cacheSetting (name, value) SELECT name, value FROM src.cacheSetting WHERE name = ?",
                       arguments: [CacheSettings.decodeSizes])
        return outcome
    }

    /// Drops what this origin brought before and no longer has.
    private static func dropGone(_ db: Database, origin: String, session: CacheSession, outcome: inout SourceOutcome) throws {
        for (kind, table, column) in claimedTables {
            let gone = try String.fetchAll(db, sql: """
                SELECT key FROM main.mergeClaim c WHERE c.origin = ? AND c.kind = ?
                AND NOT EXISTS (SELECT 1 FROM src.\(table) s WHERE s.\(column) = c.key)
                """, arguments: [origin, kind])
            for key in gone { try drop(db, origin: origin, kind: kind, key: key, session: session, outcome: &outcome) }
        }
    }

    /// Whether the source's entry `s` wins over the target's `t`: accessed later, or
    /// brought only by this origin (`?1`; its earlier version).
    private static let sourceWins = """
        (s.lastAccess > t.lastAccess
         OR (EXISTS (SELECT 1 FROM main.mergeClaim c WHERE c.kind = 'entry' AND c.key = s.key AND c.origin = ?1)
             AND NOT EXISTS (SELECT 1 FROM main.mergeClaim c WHERE c.kind = 'entry' AND c.key = s.key AND c.origin <> ?1)))
        """

    /// Whether `s` and `t` have the same content and the same files.
    private static let sameFiles = """
        (s.contentSHA256 = t.contentSHA256 AND s.kind = t.kind
         AND NOT EXISTS (SELECT tier, filename, fileSize FROM src.entryFile WHERE entryKey = s.key
                         EXCEPT SELECT tier, filename, fileSize FROM main.entryFile WHERE entryKey = s.key)
         AND NOT EXISTS (SELECT tier, filename, fileSize FROM main.entryFile WHERE entryKey = s.key
                         EXCEPT SELECT tier, filename, fileSize FROM src.entryFile WHERE entryKey = s.key))
        """

    /// The entries to take into `temp.mergeTake`, with the target's access time when it
    /// had one: what the target lacks, and what wins with other content or files. An
    /// entry whose content and files the target already has is not replaced: at most its
    /// validators and access are brought up to date (a merge again is cheap).
    private static func chooseEntries(_ db: Database, origin: String) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS mergeTake (key TEXT PRIMARY KEY, previousAccess REAL) WITHOUT ROWID;
            DELETE FROM temp.mergeTake;
            """)
        try db.execute(sql: """
            INSERT INTO temp.mergeTake (key, previousAccess)
            SELECT s.key, t.lastAccess FROM src.entry s LEFT JOIN main.entry t ON t.key = s.key
            WHERE t.key IS NULL OR (\(sourceWins) AND NOT \(sameFiles))
            """, arguments: [origin])
    }

    /// Links or copies the files the chosen entries use (one per name: a content hash and
    /// a tier); an entry one of whose files is missing from the source is not taken.
    private static func bringFiles(_ db: Database, from source: Source, into target: CacheDirectory,
                                   outcome: inout SourceOutcome, logger: Logger) throws {
        var missing: [String] = []
        let wanted = try Row.fetchAll(db, sql: """
            SELECT DISTINCT f.filename, f.fileSize FROM src.entryFile f JOIN temp.mergeTake m ON m.key = f.entryKey
            """)
        for row in wanted {
            let name: String = row["filename"], size: Int64 = row["fileSize"]
            guard CacheDirectory.isCacheFileName(name), source.directory.fileSize(name) == size else {
                missing.append(name)
                continue
            }
            switch try target.bring(name, from: source.directory) {
            case .linked: outcome.filesLinked += 1
            case .copied: outcome.filesCopied += 1
            case .present: break
            }
        }
        // The links reach the disk before the commit that uses them.
        if outcome.filesLinked + outcome.filesCopied > 0 { target.syncDirectory() }
        let taken = { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.mergeTake") ?? 0 }
        if !missing.isEmpty {
            let before = try taken()
            let statement = try db.makeStatement(sql: """
                DELETE FROM temp.mergeTake WHERE key IN (SELECT entryKey FROM src.entryFile WHERE filename = ?)
                """)
            for name in missing { try statement.execute(arguments: [name]) }
            outcome.entriesMissingFiles = before - (try taken())
            logger.warning("entries skipped: a file they use is missing from the merged cache (verify --repair it)", metadata: [
                "cache": "\(source.directory.root.path)", "entries": "\(outcome.entriesMissingFiles)", "first": "\(missing[0])",
            ])
        }
        outcome.entriesTaken = try taken()
        outcome.entriesNew = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.mergeTake WHERE previousAccess IS NULL") ?? 0
    }

    /// Entries of the same content that win: the validators and the later access of the
    /// source; what is neither taken nor refreshed is kept.
    private static func refreshSameContent(_ db: Database, origin: String, outcome: inout SourceOutcome) throws {
        let sourceEntries = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM src.entry") ?? 0
        try db.execute(sql: """
            UPDATE main.entry SET lastAccess = MAX(entry.lastAccess, s.lastAccess), fetchedAt = s.fetchedAt,
                freshUntil = s.freshUntil, etag = s.etag, lastModified = s.lastModified
            FROM src.entry s, main.entry t
            WHERE s.key = entry.key AND t.key = entry.key AND entry.key NOT IN (SELECT key FROM temp.mergeTake)
              AND \(sourceWins)
              AND (s.lastAccess > t.lastAccess OR s.fetchedAt IS NOT t.fetchedAt OR s.freshUntil IS NOT t.freshUntil
                   OR s.etag IS NOT t.etag OR s.lastModified IS NOT t.lastModified)
            """, arguments: [origin])
        outcome.entriesRefreshed = db.changesCount
        outcome.entriesKept = sourceEntries - outcome.entriesTaken - outcome.entriesMissingFiles - outcome.entriesRefreshed
    }

    /// Replaces the chosen entries with the source's, keeping the later access; their old
    /// files are deleted once nothing uses them.
    private static func replaceChosenEntries(_ db: Database, session: CacheSession) throws {
        let replaced = try String.fetchAll(db, sql: """
            SELECT DISTINCT f.filename FROM main.entryFile f JOIN temp.mergeTake m ON m.key = f.entryKey
            """)
        session.pendingDeletes.formUnion(replaced)
        try db.execute(sql: """
            DELETE FROM main.entry WHERE key IN (SELECT key FROM temp.mergeTake);
            INSERT INTO main.entry (\(EntryRecord.Columns.list))
                SELECT \(EntryRecord.Columns.list) FROM src.entry WHERE key IN (SELECT key FROM temp.mergeTake);
            INSERT INTO main.entryFile (\(EntryFileRecord.Columns.list))
                SELECT \(EntryFileRecord.Columns.list) FROM src.entryFile
                WHERE entryKey IN (SELECT key FROM temp.mergeTake);
            UPDATE main.entry SET lastAccess = m.previousAccess FROM temp.mergeTake m
                WHERE m.key = entry.key AND m.previousAccess > entry.lastAccess;
            """)
    }

    /// Profiles: between shards of one split, the row of the record read last (what a
    /// single run keeps), the newest update on a tie (a user whose record moved to
    /// another shard since); otherwise the newest update. Failures: the newest failure.
    private static func takeProfilesAndFailures(_ db: Database, from source: Source, outcome: inout SourceOutcome) throws {
        let sameSplit = source.shard.map { "shard %/\($0.count)" }
        outcome.profilesTaken = try take(db, table: "profile", column: "id", kind: "profile",
                                         columns: ProfileRecord.Columns.list, origin: source.origin, newer: """
            CASE WHEN EXISTS (SELECT 1 FROM main.mergeClaim c WHERE c.kind = 'profile' AND c.key = s.id AND c.origin LIKE ?3)
                 THEN COALESCE(s.readOrder, -1) > COALESCE(t.readOrder, -1)
                      OR (COALESCE(s.readOrder, -1) = COALESCE(t.readOrder, -1) AND s.updatedAt > t.updatedAt)
                 ELSE s.updatedAt > t.updatedAt END
            """, sameSplit)
        outcome.failuresTaken = try take(db, table: "failure", column: "key", kind: "failure",
                                         columns: FailureRow.Columns.list, origin: source.origin,
                                         newer: "s.failedAt > t.failedAt")
    }

    /// Everything the source has is now this origin's (rows another source's newer
    /// version won are shared: dropped only when no origin has them any more).
    private static func claimAll(_ db: Database, origin: String) throws {
        for (kind, table, column) in claimedTables {
            try db.execute(sql: "INSERT OR IGNORE INTO main.mergeClaim (origin, kind, key) SELECT ?, ?, \(column) FROM src.\(table)",
                           arguments: [origin, kind])
        }
    }

    /// Takes the source's rows of `table` the target lacks, has older (`newer`, an SQL
    /// condition on source row `s` and target row `t`, which may use `?3` = `argument`),
    /// or had only from this origin; returns how many.
    private static func take(_ db: Database, table: String, column: String, kind: String, columns: String,
                             origin: String, newer: String, _ argument: String? = nil) throws -> Int {
        let names = columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        // A row equal but for its update time is left as it is (a merge again is cheap).
        let differs = names.filter { $0 != column && $0 != "updatedAt" }.map { "s.\($0) IS NOT t.\($0)" }.joined(separator: " OR ")
        try db.execute(sql: """
            INSERT OR REPLACE INTO main.\(table) (\(columns))
            SELECT \(names.map { "s." + $0 }.joined(separator: ", "))
            FROM src.\(table) s LEFT JOIN main.\(table) t ON t.\(column) = s.\(column)
            WHERE t.\(column) IS NULL
               OR ((\(differs)) AND ((\(newer))
                   OR (EXISTS (SELECT 1 FROM main.mergeClaim c WHERE c.kind = ?1 AND c.key = s.\(column) AND c.origin = ?2)
                       AND NOT EXISTS (SELECT 1 FROM main.mergeClaim c WHERE c.kind = ?1 AND c.key = s.\(column) AND c.origin <> ?2))))
            """, arguments: newer.contains("?3") ? [kind, origin, argument] : [kind, origin])
        return db.changesCount
    }

    /// Removes `origin`'s claim on a row; a row no origin claims any more is deleted
    /// (an entry's files once nothing references them).
    private static func drop(_ db: Database, origin: String, kind: String, key: String, session: CacheSession,
                             outcome: inout SourceOutcome) throws {
        try db.execute(sql: "DELETE FROM mergeClaim WHERE origin = ? AND kind = ? AND key = ?", arguments: [origin, kind, key])
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM mergeClaim WHERE kind = ? AND key = ? LIMIT 1", arguments: [kind, key]) == nil else {
            return
        }
        switch kind {
        case "entry":
            guard try EntryRecords.isCached(db, key: key) else { return }
            session.pendingDeletes.formUnion(try EntryRecords.delete(db, key: key).map(\.filename))
            outcome.entriesDropped += 1
        case "profile":
            try db.execute(sql: "DELETE FROM profile WHERE id = ?", arguments: [key])
            outcome.profilesDropped += db.changesCount
        default:
            try FailureRecords.clear(db, key: key)
        }
    }

    /// When the sources hold every shard of one split (0/n … n−1/n), the origins of
    /// other splits in the target: the new split covers everything they brought.
    static func supersededOrigins(_ sources: [Source], index: CacheIndex) throws -> [String] {
        let shards = Set(sources.compactMap(\.shard).map { "\($0)" })
        let complete = Set(sources.compactMap(\.shard?.count)).filter { n in (0..<n).allSatisfy { shards.contains("\($0)/\(n)") } }
        guard complete.count == 1, let count = complete.first else { return [] }
        let origins = try index.read { try String.fetchAll($0, sql: "SELECT DISTINCT origin FROM mergeClaim WHERE origin LIKE 'shard %'") }
        return origins.filter { origin in
            guard let shard = try? Shard(parsing: String(origin.dropFirst("shard ".count))) else { return false }
            return shard.count != count
        }.sorted()
    }

    static func canonicalPath(_ url: URL) -> String {
        url.resolvingSymlinksInPath().standardizedFileURL.path
    }
}
