import Foundation

/// Checks a cache for CI (`verify`) and mends what can be mended (`--repair`): every
/// entry's files exist with the recorded size and SHA-256, no unreferenced cache file,
/// no temporary leftover, within budget.
public struct CacheVerifier: Sendable {
    public let directory: CacheDirectory

    public init(directory: CacheDirectory) {
        self.directory = directory
    }

    public struct Problem: Codable, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Codable, Sendable {
            case missingFile, wrongSize, wrongHash, orphanFile, temporaryLeftover, overBudget, profileDangling
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
        public var budgetBytes: Int64
        public var problems: [Problem]
        /// With --repair: what was done.
        public var repaired: [String]
        /// Things that are not damage: the leftovers and not-yet-referenced files of a run
        /// that was killed, which the next run sweeps.
        public var notices: [String] = []
    }

    /// Checks everything; with `repair`, drops broken entries (a profile then falls
    /// back to its monogram) and removes orphans and leftovers, leaving good entries as
    /// they are. Call under the cache lock.
    public func verify(budgetBytes: Int64, repair: Bool) throws -> Result {
        var metadata = try directory.loadMetadata()
        let listing = try directory.listFiles()
        var sizes: [String: Int64] = [:]
        for file in listing { sizes[file.name] = file.size }
        var problems: [Problem] = []
        var broken = Set<String>()
        var hashes: [String: String] = [:]

        for (key, entry) in metadata.entries.sorted(by: { $0.key < $1.key }) {
            let subject = redactedURL(key)
            for file in entry.distinctFilenames.sorted() {
                guard let recorded = entry.files.values.first(where: { $0.filename == file }) else { continue }
                guard let size = sizes[file] else {
                    problems.append(Problem(kind: .missingFile, subject: subject, detail: "\(file) does not exist"))
                    broken.insert(key)
                    continue
                }
                if size != recorded.fileSize {
                    problems.append(Problem(kind: .wrongSize, subject: subject, detail: "\(file) is \(size) bytes, recorded \(recorded.fileSize)"))
                    broken.insert(key)
                    continue
                }
                if let expected = recorded.sha256 {
                    let actual = try hashes[file] ?? hashFile(file)
                    hashes[file] = actual
                    if actual != expected {
                        problems.append(Problem(kind: .wrongHash, subject: subject, detail: "\(file) has SHA-256 \(actual.prefix(12))…, recorded \(expected.prefix(12))…"))
                        broken.insert(key)
                    }
                }
            }
        }
        let referenced = metadata.referencedFiles
        let interrupted = directory.hasInterruptedRun
        var litter = 0
        var litterBytes: Int64 = 0
        for file in listing.sorted(by: { $0.name < $1.name }) {
            let problem: Problem
            if file.name.hasPrefix(CacheDirectory.temporaryPrefix) {
                problem = Problem(kind: .temporaryLeftover, subject: file.name, detail: "left by an interrupted write")
            } else if CacheDirectory.isCacheFileName(file.name), !referenced.contains(file.name) {
                problem = Problem(kind: .orphanFile, subject: file.name, detail: "no entry references it")
            } else {
                continue
            }
            if interrupted {
                litter += 1
                litterBytes += file.size
            } else {
                problems.append(problem)
            }
        }
        var notices: [String] = []
        if interrupted {
            notices.append("the last run was killed before it finished: its \(litter) leftover or not-yet-referenced files are swept by the next run; the saved cache is consistent")
        }
        for (id, profile) in metadata.profiles.sorted(by: { $0.key < $1.key }) {
            for name in profile.cachedImagePath.values where sizes[name] == nil {
                problems.append(Problem(kind: .profileDangling, subject: "user \(id)", detail: "shows \(name), which does not exist"))
                break
            }
        }
        let total = listing.filter { !CacheDirectory.isBookkeeping($0.name) }.reduce(Int64(0)) { $0 + $1.size }
        // An interrupted run's litter is swept by the next run: it is not the cache.
        if total - litterBytes > budgetBytes {
            problems.append(Problem(kind: .overBudget, subject: directory.root.path, detail: "\(ByteSize.format(total)) is over the budget of \(ByteSize.format(budgetBytes))"))
        }

        var repaired: [String] = []
        if repair && !problems.isEmpty {
            for key in broken.sorted() {
                metadata.entries[key] = nil
                repaired.append("dropped entry \(redactedURL(key))")
            }
            metadata.refreshProfiles()
            metadata.updatedAt = Date()
            try directory.saveMetadata(metadata)
            for name in try directory.sweep(keeping: metadata.referencedFiles) {
                repaired.append("removed \(name)")
            }
            directory.syncDirectory()
        }
        return Result(entries: metadata.entries.count, files: listing.count, cacheBytes: total, budgetBytes: budgetBytes,
                      problems: problems, repaired: repaired, notices: notices)
    }

    private func hashFile(_ name: String) throws -> String {
        let url = directory.root.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw StoreError.io(path: url.path, reason: "cannot read")
        }
        return SHA256Hex.of([UInt8](data))
    }
}

/// Figures about a cache, for `stats`.
public struct CacheStatistics: Codable, Sendable {
    public var entries: Int
    public var photoEntries: Int
    public var monogramEntries: Int
    public var profiles: Int
    public var files: Int
    public var cacheBytes: Int64
    public var budgetBytes: Int64
    /// cacheBytes / budgetBytes.
    public var budgetUse: Double
    /// Tier in pixels -> bytes of its files (a file two tiers share counts once, under the larger).
    public var bytesByTier: [String: Int64]
    public var oldestAccess: Date?
    public var newestAccess: Date?
    public var failingSources: Int

    public static func of(_ directory: CacheDirectory, budgetBytes: Int64) throws -> CacheStatistics {
        let metadata = try directory.loadMetadata()
        let listing = try directory.listFiles()
        var byTier: [String: Int64] = [:]
        var counted = Set<String>()
        for entry in metadata.entries.values {
            for (tier, file) in entry.files.sorted(by: { (Int($0.key) ?? 0) > (Int($1.key) ?? 0) }) where counted.insert(file.filename).inserted {
                byTier[tier, default: 0] += file.fileSize
            }
        }
        let total = listing.filter { !CacheDirectory.isBookkeeping($0.name) }.reduce(Int64(0)) { $0 + $1.size }
        let accesses = metadata.entries.values.map(\.lastAccess)
        return CacheStatistics(
            entries: metadata.entries.count,
            photoEntries: metadata.entries.values.filter { $0.kind == .photo }.count,
            monogramEntries: metadata.entries.values.filter { $0.kind == .monogram }.count,
            profiles: metadata.profiles.count, files: listing.count, cacheBytes: total, budgetBytes: budgetBytes,
            budgetUse: budgetBytes > 0 ? Double(total) / Double(budgetBytes) : 0, bytesByTier: byTier,
            oldestAccess: accesses.min(), newestAccess: accesses.max(), failingSources: metadata.failures.count
        )
    }
}
