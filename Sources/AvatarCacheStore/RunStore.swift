import AvatarCacheModel
import AvatarCacheSupport
import Foundation
internal import GRDB

/// What a warm run asks of the index, each method named for what it means to the run
/// (the way GRDB's demo application keeps its `AppDatabase`): the pipeline opens no
/// transaction and writes no SQL. The run's working set lives in temporary tables of
/// the index's writer connection (`RunTables`), so every method that reads them goes
/// through the writer.
package struct RunStore: Sendable {
    let index: CacheIndex

    init(index: CacheIndex) {
        self.index = index
    }

    /// Where an export record was read: its rank in the run, and the rank of its
    /// export's first record.
    package typealias RecordPosition = RunTables.RecordWriter.RecordPosition

    /// Before the run reads anything: failures past their retry time forgotten, the
    /// run's working set emptied, which shard's profiles this cache holds noted (how
    /// `merge` tells shards apart), and the decode sizes in points it was given (the
    /// lookup's tier rule starts from the smallest).
    package func beginRun(at started: Date, shard: String?, decodeSizes: [Int]) throws {
        try index.write { db in
            try FailureRecords.expire(db, before: started)
            try RunTables.create(db)
            try CacheSettings.set(db, CacheSettings.shard, to: shard)
            let text = DecodeSizes.text(decodeSizes)
            if try CacheSettings.value(db, CacheSettings.decodeSizes) != text {
                try CacheSettings.set(db, CacheSettings.decodeSizes, to: text)
                // metadata.json says them too: the run's end writes it again.
                try CacheSettings.set(db, CacheSettings.metadataStamp, to: nil)
            }
        }
    }

    /// metadata.json written again from the index (not `durable`: without an fsync).
    package func writeMetadata(to directory: CacheDirectory, durable: Bool = true) throws {
        try index.read { try MetadataDocument.write(from: $0, to: directory, durable: durable) }
    }

    /// What the run noted of the metadata.json it last wrote durably (`MetadataRefresh`).
    package func metadataStamp() throws -> String? {
        try index.read { try CacheSettings.value($0, CacheSettings.metadataStamp) }
    }

    package func setMetadataStamp(_ stamp: String?) throws {
        try index.write { try CacheSettings.set($0, CacheSettings.metadataStamp, to: stamp) }
    }

    /// Every file name an entry uses.
    package func referencedFileNames() throws -> Set<String> {
        try index.read { try EntryRecords.allFileNames($0) }
    }

    /// An export record for the run: its profile, where it was read, and whether this
    /// run takes it (always, unless sharded: another shard's record only keeps its id).
    package struct ExportRecord: Sendable {
        package var profile: Profile
        package var position: RecordPosition
        package var owned: Bool

        package init(profile: Profile, position: RecordPosition, owned: Bool) {
            self.profile = profile
            self.position = position
            self.owned = owned
        }
    }

    /// Records a batch of export records in one transaction, written on the index's
    /// writer queue while the caller reads on. `repeated` is told of each record whose
    /// id an earlier record of the same export had (with that record's rank: nothing of
    /// this one is written); `profilesChanged` when the batch added or changed a profile;
    /// `completion` when the batch is written or has failed.
    package func recordLater(_ records: [ExportRecord], at date: Date, sharded: Bool,
                     repeated: @escaping @Sendable (ExportRecord, Int) -> Void,
                     profilesChanged: @escaping @Sendable () -> Void = {},
                     completion: @escaping @Sendable (Error?) -> Void) {
        index.writeLater({ db in
            var writer = try RunTables.RecordWriter(db)
            defer { if writer.profilesChanged > 0 { profilesChanged() } }
            for record in records {
                if !record.owned {
                    try writer.writeOther(record.profile.id, at: record.position)
                } else if let first = try writer.write(record.profile, at: record.position, date: date, sharded: sharded) {
                    repeated(record, first)
                }
            }
        }, completion: completion)
    }

    /// How many distinct profiles and photo sources the run has read.
    package func runCounts() throws -> (profiles: Int, sources: Int) {
        try index.write { try RunTables.counts($0) }
    }

    /// A page of the run's photo sources, in rank order, with what the index has of them.
    package struct SourcePage {
        package var sources: [RunTables.Source]
        /// The cached entries of those sources, by source key.
        package var entries: [String: CacheEntry]
        /// Their failures remembered, by source key.
        package var failures: [String: FailureRecord]
    }

    /// The next `limit` sources after `rank` (nil when there are none left), read with
    /// their entries and failures in three queries.
    package func sourcePage(after rank: Int, limit: Int) throws -> SourcePage? {
        try index.write { db in
            let sources = try RunTables.sources(db, after: rank, limit: limit)
            guard let last = sources.last else { return nil }
            let (entries, failures) = try RunTables.entriesAndFailures(db, ranks: rank, through: last.rank)
            return SourcePage(sources: sources, entries: entries, failures: failures)
        }
    }

    /// The next `limit` of this run's sources after `rank` that failed last time because
    /// their host's limits ran past `--max-host-wait` (`rateLimited`), with their entries
    /// and failures: the plan asks for them before the others. Nil when none are left.
    package func rateLimitedSourcePage(after rank: Int, limit: Int) throws -> SourcePage? {
        try index.write { db in
            let page = try RunTables.sourcesFailed(db, as: FailureClass.rateLimited.rawValue, after: rank, limit: limit)
            return page.sources.isEmpty ? nil : SourcePage(sources: page.sources, entries: page.entries, failures: page.failures)
        }
    }

    /// Every entry of the run's sources marked as accessed at `started` (earlier by rank).
    package func markSourcesAccessed(at started: Date) throws {
        try index.write { try RunTables.touchSources($0, started: started) }
    }

    /// What the monogram plan needs of the run's profiles, counted in one walk of them
    /// (`RunTables.forEachProfile`): the distinct monograms of the profiles whose photo is
    /// not cached (initials, glyph and colour; a million profiles are a few thousand of
    /// them), each with its best rank and how many profiles show it; how many profiles have
    /// no photo source; how many show a cached photo.
    package struct MonogramCensus: Sendable {
        package struct Group: Sendable {
            package var initials: String
            package var glyph: MonogramGlyph?
            package var color: String
            /// The best (lowest) rank of the profiles that show it.
            package var rank: Int
            package var profiles: Int
        }

        package var groups: [Group] = []
        package var profilesWithoutPhoto = 0
        package var profilesShowingPhoto = 0
    }

    /// The monograms this run's profiles without a cached photo show; `photoless`: only
    /// those of the profiles with no photo to fetch (known before any photo is).
    package func monogramCensus(photoless: Bool = false) throws -> MonogramCensus {
        try index.write { db in
            var census = MonogramCensus()
            // Initials, glyph and colour (as bytes) -> their group.
            var groupOf: [[UInt8]: Int] = [:]
            try RunTables.forEachProfile(db) { profile in
                if photoless && profile.hasPhotoSource { return }
                if !profile.hasPhotoSource { census.profilesWithoutPhoto += 1 }
                if profile.photoCached {
                    census.profilesShowingPhoto += 1
                } else if let index = groupOf[profile.parts] {
                    census.groups[index].profiles += 1
                    census.groups[index].rank = min(census.groups[index].rank, profile.rank)
                } else {
                    let (initials, glyph, color) = profile.fields
                    groupOf[profile.parts] = census.groups.count
                    census.groups.append(.init(initials: initials, glyph: glyph, color: color, rank: profile.rank, profiles: 1))
                }
            }
            return census
        }
    }

    /// The cached entries of `keys` (those that have one), by key.
    package func entries(forKeys keys: [String]) throws -> [String: CacheEntry] {
        try index.read { db in
            var found: [String: CacheEntry] = [:]
            for key in keys {
                if let entry = try EntryRecords.entry(db, key: key) { found[key] = entry }
            }
            return found
        }
    }

    /// Marks each entry accessed at its time (never earlier than it was), in one transaction.
    package func markAccessed(_ accesses: [(key: String, at: Date)]) throws {
        guard !accesses.isEmpty else { return }
        try index.write { db in
            for access in accesses { try EntryRecords.touch(db, key: access.key, at: access.at) }
        }
    }

    /// A few entries whose content is `contentSHA256` (any source): files to re-use.
    package func entries(withContent contentSHA256: String) throws -> [CacheEntry] {
        try index.read { try EntryRecords.entries($0, contentSHA256: contentSHA256) }
    }

    /// What a finished job leaves in the index.
    package enum JobResult {
        /// A source's (or monogram's) new entry, replacing what was there.
        case saved(key: String, entry: CacheEntry)
        /// A job that failed: the cached entry kept, marked accessed at `keptAccess`
        /// when there is one; the failure remembered until its retry time, or forgotten
        /// (nil: decided again next run).
        case failed(key: String, keptAccess: Date?, failure: FailureRecord?)
    }

    /// Commits a batch of finished jobs in one transaction. Returns the files the saved
    /// entries replaced that nothing uses any more (to delete once metadata.json no
    /// longer names them).
    package func commit(_ results: [JobResult]) throws -> [String] {
        try index.write { db in
            var replaced: [String] = []
            for result in results {
                switch result {
                case let .saved(key, entry):
                    replaced += try EntryRecords.save(db, key: key, entry: entry).map(\.filename)
                    try FailureRecords.clear(db, key: key)
                case let .failed(key, keptAccess, failure):
                    if let keptAccess { try EntryRecords.touch(db, key: key, at: keptAccess) }
                    if let failure {
                        try FailureRecords.save(db, key: key, failure: failure)
                    } else {
                        try FailureRecords.clear(db, key: key)
                    }
                }
            }
            return replaced
        }
    }

    /// What the run's profiles show after the prune, from what the plan counted:
    /// `monograms` (each monogram's key and how many profiles show it) count as showing
    /// their monogram when it is cached, else nothing; a profile of the run whose photo
    /// was `evicted` shows its monogram instead, if cached.
    package func showing(monograms: [(key: String, profiles: Int)], photos: Int, evicted: [String]) throws
        -> (photo: Int, monogram: Int, nothing: Int) {
        try index.write { db in
            var photo = photos, monogram = 0, nothing = 0
            for (key, profiles) in monograms {
                if try EntryRecords.isCached(db, key: key) { monogram += profiles } else { nothing += profiles }
            }
            for key in evicted where !key.hasPrefix("monogram:") {
                for profile in try RunTables.profiles(db, withPhoto: key) {
                    photo -= 1
                    if try EntryRecords.isCached(db, key: profile.monogram.key) { monogram += 1 } else { nothing += 1 }
                }
            }
            return (photo, monogram, nothing)
        }
    }
}
