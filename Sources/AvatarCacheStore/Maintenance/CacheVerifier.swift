import AvatarCacheModel
import AvatarCacheSupport
import Foundation
internal import GRDB
import Logging

/// Checks a cache for CI (`verify`) and mends what can be mended (`--repair`): every
/// entry's files exist with the recorded size and SHA-256, metadata.json names only files
/// that exist, no unreferenced cache file, no temporary leftover, within budget.
public struct CacheVerifier: Sendable {
    public let directory: CacheDirectory

    public init(directory: CacheDirectory) {
        self.directory = directory
    }

    public struct Problem: Codable, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Codable, Sendable {
            case missingFile, wrongSize, wrongHash, orphanFile, temporaryLeftover, overBudget, documentDangling, documentUnreadable, indexTotalWrong
        }
        public var kind: Kind
        /// The entry key (URL, sha256:…, monogram:…), user id or file name concerned.
        public var subject: String
        public var detail: String

        public var description: String { "\(kind.rawValue): \(subject): \(detail)" }
    }

    public struct Result: Codable, Sendable {
        public var entries: Int
        public var files: Int
        public var cacheBytes: Int64
        /// The budget the cache was measured against, and where it came from.
        public var budgetBytes: Int64
        public var budgetOrigin: Pruner.Origin
        public var problems: [Problem]
        /// With --repair: what was done.
        public var repaired: [String]
        /// Things that are not damage: the leftovers and not-yet-referenced files of a run
        /// that was killed, which the next run sweeps.
        public var notices: [String] = []
        /// With --repair: the problems a check after the repair still finds.
        public var unrepaired: [Problem] = []

        /// What fails a CI step: the problems found, or with --repair those left after it.
        public var failing: [Problem] { repaired.isEmpty ? problems : unrepaired }
    }

    /// A directory a first run was writing when it was killed, before it made its index:
    /// not damage. The note to print, or nil when that is not the case.
    public static func interruptedFirstRun(_ directory: CacheDirectory) -> String? {
        guard directory.hasInterruptedRun, !CacheIndex.exists(in: directory),
              directory.fileSize(CacheDirectory.metadataName) == nil else { return nil }
        return "a first run was killed before it saved anything; the next warm starts again and re-uses the files it finds here"
    }

    /// `verify` in a session of its own, the lock waited for up to `wait` seconds
    /// (`CacheStore.verify`, the `verify` command's), against `budgetBytes` when given,
    /// else the cache's own budget, else the default. A budget given is used for this
    /// check alone: verify never changes the budget the cache keeps.
    public func verify(budgetBytes: Int64? = nil, repair: Bool, wait: TimeInterval = 0,
                       logger: Logger = Logger(label: "avatar-cache.verify")) throws -> Result {
        let session = try CacheSession.open(directory, wait: wait, create: false, logger: logger)
        defer { session.close() }
        let budget = try session.index.read { try Pruner(budgetBytes: budgetBytes).kept($0, recording: false) }
        return try verify(session, budget: budget, repair: repair)
    }

    /// Checks everything; with `repair`, drops broken entries (a profile then falls
    /// back to its monogram), rewrites metadata.json from the index and removes orphans
    /// and leftovers, leaving good entries as they are. Call inside a `CacheSession`.
    func verify(_ session: CacheSession, budget: Pruner, repair: Bool) throws -> Result {
        let listing = try directory.listFiles()
        var findings = Findings(listing: listing, interrupted: directory.hasInterruptedRun)
        try checkEntries(session.index, &findings)
        let referenced = try session.index.read { try EntryRecords.allFileNames($0) }
        checkUnreferenced(referenced, &findings)
        checkDocument(&findings)
        let total = try checkTotals(session.index, budgetBytes: budget.budgetBytes, &findings)
        var repaired: [String] = []
        if repair && !findings.problems.isEmpty {
            repaired = try self.repair(session, findings, referenced: referenced, budget: budget)
        }
        var result = Result(entries: findings.entries, files: listing.count, cacheBytes: total, budgetBytes: budget.budgetBytes,
                            budgetOrigin: budget.budgetOrigin, problems: findings.problems, repaired: repaired, notices: findings.notices)
        if !repaired.isEmpty {
            result.unrepaired = try verify(session, budget: budget, repair: false).problems
        }
        return result
    }

    /// What the checks find, as they go.
    private struct Findings {
        /// The directory's files by name, with their sizes.
        let sizes: [String: Int64]
        let listing: [(name: String, size: Int64)]
        /// The last run was killed: its leftovers are notices, not problems.
        let interrupted: Bool
        var problems: [Problem] = []
        var notices: [String] = []
        /// The entries with a missing or damaged file, by key.
        var broken = Set<String>()
        var entries = 0

        init(listing: [(name: String, size: Int64)], interrupted: Bool) {
            self.listing = listing
            self.interrupted = interrupted
            var sizes: [String: Int64] = [:]
            for file in listing { sizes[file.name] = file.size }
            self.sizes = sizes
        }
    }

    /// Every entry's files exist, with the recorded size and SHA-256 (each file hashed once).
    private func checkEntries(_ index: CacheIndex, _ findings: inout Findings) throws {
        var hashes: [String: String] = [:]
        try index.read { db in
            try EntryRecords.forEach(db) { key, entry in
                findings.entries += 1
                let subject = shownURL(key)
                for file in entry.distinctFilenames.sorted() {
                    guard let recorded = entry.files.values.first(where: { $0.filename == file }) else { continue }
                    guard let size = findings.sizes[file] else {
                        findings.problems.append(Problem(kind: .missingFile, subject: subject, detail: "\(file) does not exist"))
                        findings.broken.insert(key)
                        continue
                    }
                    if size != recorded.fileSize {
                        findings.problems.append(Problem(kind: .wrongSize, subject: subject, detail: "\(file) is \(size) bytes, recorded \(recorded.fileSize)"))
                        findings.broken.insert(key)
                        continue
                    }
                    if let expected = recorded.sha256 {
                        let actual = try hashes[file] ?? hashFile(file)
                        hashes[file] = actual
                        if actual != expected {
                            findings.problems.append(Problem(kind: .wrongHash, subject: subject, detail: "\(file) has SHA-256 \(actual.prefix(12))…, recorded \(expected.prefix(12))…"))
                            findings.broken.insert(key)
                        }
                    }
                }
            }
        }
    }

    /// No temporary leftover and no cache file that no entry references: a problem, or
    /// after a killed run what the next run sweeps (a notice).
    private func checkUnreferenced(_ referenced: Set<String>, _ findings: inout Findings) {
        var litter = 0
        for file in findings.listing.sorted(by: { $0.name < $1.name }) {
            let problem: Problem
            if file.name.hasPrefix(CacheDirectory.temporaryPrefix) {
                problem = Problem(kind: .temporaryLeftover, subject: file.name, detail: "left by an interrupted write")
            } else if CacheDirectory.isCacheFileName(file.name), !referenced.contains(file.name) {
                problem = Problem(kind: .orphanFile, subject: file.name, detail: "no entry references it")
            } else {
                continue
            }
            if findings.interrupted { litter += 1 } else { findings.problems.append(problem) }
        }
        if findings.interrupted {
            findings.notices.append("the last run was killed before it finished: its \(litter) leftover or not-yet-referenced files are swept by the next run; the saved cache is consistent")
        }
    }

    /// The apps' document reads, every file it names exists, and every user's entry is in
    /// it. Walked as a stream (`MetadataScan`): a million users' document is never held.
    /// The entries' keys are kept as 64-bit hashes (SipHash, seeded per process), 16 bytes
    /// an entry however long its URL: a user's dangling entry escapes only if its hash
    /// equals one of the n entries', a chance of n / 2^64.
    private func checkDocument(_ findings: inout Findings) {
        guard findings.sizes[CacheDirectory.metadataName] != nil else {
            if !findings.interrupted && findings.entries > 0 {
                findings.problems.append(Problem(kind: .documentUnreadable, subject: CacheDirectory.metadataName, detail: "missing"))
            }
            return
        }
        var held = Set<Int>()
        // Users met before the entries (a document not written by avatar-cache, whose
        // `users` come after `entries`), checked once the entries are known.
        var early: [(id: String, key: String)] = []
        var entriesSeen = false
        var dangling: [(key: String, problem: Problem)] = []
        var danglingUsers: [(id: String, key: String)] = []
        let sizes = findings.sizes
        do {
            _ = try MetadataScan.walk(directory, entry: { key, filenames in
                entriesSeen = true
                held.insert(Self.hashed(key))
                if let name = filenames.sorted().first(where: { sizes[$0] == nil }) {
                    dangling.append((key, Problem(kind: .documentDangling, subject: shownURL(key), detail: "metadata.json names \(name), which does not exist")))
                }
            }, user: { id, key in
                guard let key else { return }
                if !entriesSeen {
                    early.append((id, key))
                } else if !held.contains(Self.hashed(key)) {
                    danglingUsers.append((id, key))
                }
            })
            for (id, key) in early where !held.contains(Self.hashed(key)) { danglingUsers.append((id, key)) }
        } catch {
            findings.problems.append(Problem(kind: .documentUnreadable, subject: CacheDirectory.metadataName, detail: "\(error)"))
            return
        }
        findings.problems += dangling.sorted { $0.key < $1.key }.map(\.problem)
        // Each user's entry is one the document holds (a reader finds their files there).
        for (id, key) in danglingUsers.sorted(by: { $0.id < $1.id }) {
            findings.problems.append(Problem(kind: .documentDangling, subject: "user \(id)", detail: "metadata.json shows \(shownURL(key)), which it does not hold"))
        }
    }

    private static func hashed(_ key: String) -> Int {
        var hasher = Hasher()
        hasher.combine(key)
        return hasher.finalize()
    }

    /// The index's running total is its files' sizes, and within the budget (a killed
    /// run had not pruned yet: a notice). Returns the total.
    private func checkTotals(_ index: CacheIndex, budgetBytes: Int64, _ findings: inout Findings) throws -> Int64 {
        let (total, runningTotal) = try index.read { (try EntryRecords.cacheBytesCounted($0), try EntryRecords.cacheBytes($0)) }
        if total != runningTotal {
            findings.problems.append(Problem(kind: .indexTotalWrong, subject: CacheIndex.fileName, detail: "the running total says \(runningTotal) bytes, the files \(total)"))
        }
        if total > budgetBytes {
            let over = "\(ByteSize.format(total)) is over the budget of \(ByteSize.format(budgetBytes))"
            if findings.interrupted {
                // A run commits its photos as they come and prunes at its end.
                findings.notices.append("\(over): the killed run had not pruned yet; the next run does")
            } else {
                findings.problems.append(Problem(kind: .overBudget, subject: directory.root.path, detail: over))
            }
        }
        return total
    }

    /// Drops the broken entries, removes orphans and leftovers, prunes to the budget and
    /// rewrites metadata.json from the index. Returns what was done.
    private func repair(_ session: CacheSession, _ findings: Findings, referenced: Set<String>, budget: Pruner) throws -> [String] {
        var repaired: [String] = []
        let broken = findings.broken.sorted()
        let freed = try session.index.write { db in
            let freed = try broken.flatMap { key in try EntryRecords.delete(db, key: key).map(\.filename) }
            try EntryRecords.recountCacheBytes(db)
            return freed
        }
        for key in broken { repaired.append("dropped entry \(shownURL(key))") }
        session.pendingDeletes.formUnion(freed)
        let orphans = Set(findings.listing.map(\.name).filter {
            $0.hasPrefix(CacheDirectory.temporaryPrefix) || (CacheDirectory.isCacheFileName($0) && !referenced.contains($0))
        })
        let outcome = try session.finish(pruner: budget, recordsBudget: false, entriesChanged: true, orphans: orphans)
        if outcome.deletedFiles > 0 { repaired.append("removed \(outcome.deletedFiles) unreferenced or leftover files") }
        if !outcome.plan.evicted.isEmpty { repaired.append("evicted \(outcome.plan.evicted.count) least recently used entries to fit the budget") }
        repaired.append("rewrote \(CacheDirectory.metadataName) from the index")
        return repaired
    }

    private func hashFile(_ name: String) throws -> String {
        let url = directory.root.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw StoreError.io(path: url.path, reason: "cannot read")
        }
        return SHA256Hex.of([UInt8](data))
    }
}

/// Figures about a cache, for `stats`: queries on the index, nothing read whole.
public struct CacheStatistics: Codable, Sendable {
    public var entries: Int
    public var photoEntries: Int
    public var monogramEntries: Int
    public var profiles: Int
    public var files: Int
    public var cacheBytes: Int64
    /// The budget the cache is measured against, and where it came from (given to
    /// `stats`, the cache's own, or the default), with the trim ratio a prune goes down to.
    public var budgetBytes: Int64
    public var budgetOrigin: Pruner.Origin
    public var trimRatio: Double
    /// cacheBytes / budgetBytes.
    public var budgetUse: Double
    /// Tier in pixels -> bytes of its files (a file two tiers share counts once, under the larger).
    public var bytesByTier: [String: Int64]
    public var oldestAccess: Date?
    public var newestAccess: Date?
    public var failingSources: Int

    static func of(_ directory: CacheDirectory, budgetBytes: Int64?) throws -> CacheStatistics {
        let index = try CacheIndex.openExisting(directory)
        defer { index.close() }
        return try index.read { db in
            var byTier: [String: Int64] = [:]
            // Each file once, under its largest tier.
            let tiers = try Row.fetchCursor(db, sql: "SELECT MAX(tier) AS tier, MAX(fileSize) AS bytes FROM entryFile GROUP BY filename")
            while let row = try tiers.next() { byTier[String(row["tier"] as Int), default: 0] += row["bytes"] as Int64 }
            let kinds = try Row.fetchAll(db, sql: "SELECT kind, COUNT(*) AS count FROM entry GROUP BY kind")
            let count = { (kind: AvatarKind) in kinds.first { ($0["kind"] as String) == kind.rawValue }.map { $0["count"] as Int } ?? 0 }
            let access = try Row.fetchOne(db, sql: "SELECT MIN(lastAccess) AS oldest, MAX(lastAccess) AS newest FROM entry")
            let files = try EntryFileRecord.select(EntryFileRecord.Columns.filename).distinct().fetchCount(db)
            let total = try EntryRecords.cacheBytes(db)
            let budget = try Pruner(budgetBytes: budgetBytes).kept(db, recording: false)
            let budgetBytes = budget.budgetBytes
            return CacheStatistics(
                entries: try EntryRecords.count(db), photoEntries: count(.photo), monogramEntries: count(.monogram),
                profiles: try ProfileRecords.count(db), files: files, cacheBytes: total, budgetBytes: budgetBytes,
                budgetOrigin: budget.budgetOrigin, trimRatio: budget.trimRatio, budgetUse: budgetBytes > 0 ? Double(total) / Double(budgetBytes) : 0, bytesByTier: byTier,
                oldestAccess: (access?["oldest"] as Double?).map(Date.init(indexValue:)),
                newestAccess: (access?["newest"] as Double?).map(Date.init(indexValue:)),
                failingSources: try FailureRecords.count(db))
        }
    }
}
