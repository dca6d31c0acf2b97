import AvatarCacheModel
import Foundation
internal import GRDB

/// A run's working set, in temporary tables of the index's writer connection (gone with
/// it; never in the cache file): the profiles and distinct photo sources of this run's
/// exports, in priority order. They let a run of a million profiles plan by query with
/// flat memory, instead of holding every record.
///
/// `rank` is the record's position across the run's exports (the readers emit in
/// priority order: most recently active conversations first); the first record of an
/// id or a source gives its rank. An export's records have consecutive ranks, so an id
/// seen before at a rank at or after the export's first is repeated inside that export:
/// a bad record, and the first record wins. A user in two exports is not one: the later
/// export's record updates the profile. In a run of one shard, `run_other` holds the ids
/// the other shards take, so that every shard tells the same records apart as one run.
package enum RunTables {
    static func create(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS run_profile (id TEXT PRIMARY KEY, rank INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TEMP TABLE IF NOT EXISTS run_other (id TEXT PRIMARY KEY, rank INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TEMP TABLE IF NOT EXISTS run_source (
                rank INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, url TEXT, sendMonicaToken INTEGER NOT NULL, inline BLOB);
            DELETE FROM temp.run_profile;
            DELETE FROM temp.run_other;
            DELETE FROM temp.run_source;
            """)
    }

    /// Writes a batch of export records: the profile, and this run's profile and source
    /// (the first record of an id or a source keeps its rank; a URL one record marks for
    /// the Monica token keeps it). Statements prepared once per batch, run through
    /// `RawStatement`, which boxes nothing per record (docs/performance-notes.md,
    /// "RawStatement").
    package struct RecordWriter {
        let addProfile: RawStatement
        let firstOfProfile: RawStatement
        let addOther: RawStatement
        let otherInFile: RawStatement
        let storedProfile: RawStatement
        let saveProfile: RawStatement
        let addSource: RawStatement
        /// Profile rows this writer inserted or changed (an unchanged record writes none).
        private(set) var profilesChanged = 0

        init(_ db: Database) throws {
            addProfile = try RawStatement(db, sql: "INSERT OR IGNORE INTO temp.run_profile (id, rank) VALUES (?, ?)")
            // rank + 1: 0 means no row.
            firstOfProfile = try RawStatement(db, sql: "SELECT rank + 1 FROM temp.run_profile WHERE id = ? AND rank >= ?")
            addOther = try RawStatement(db, sql: "INSERT OR IGNORE INTO temp.run_other (id, rank) VALUES (?, ?)")
            otherInFile = try RawStatement(db, sql: "SELECT rank + 1 FROM temp.run_other WHERE id = ? AND rank >= ?")
            storedProfile = try RawStatement(db, sql: ProfileRecords.storedSQL)
            saveProfile = try RawStatement(db, sql: ProfileRecords.saveSQL)
            addSource = try RawStatement(db, sql: """
                INSERT INTO temp.run_source (rank, key, url, sendMonicaToken, inline) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET sendMonicaToken = MAX(sendMonicaToken, excluded.sendMonicaToken)
                """)
        }

        /// Where a record was read: its rank in the run, and the rank of its export's first.
        package struct RecordPosition: Sendable {
            package var rank: Int
            package var fileStart: Int

            package init(rank: Int, fileStart: Int) {
                self.rank = rank
                self.fileStart = fileStart
            }
        }

        /// Writes a record of this run; returns the rank of the earlier record of the same
        /// id in the same export instead, when there is one (nothing written).
        mutating func write(_ profile: Profile, at position: RecordPosition, date: Date, sharded: Bool) throws -> Int? {
            func earlier(_ statement: RawStatement) throws -> Int? {
                statement.bind(1, profile.id)
                statement.bind(2, position.fileStart)
                let found = try statement.singleInt()
                return found > 0 ? found - 1 : nil
            }
            if sharded, let other = try earlier(otherInFile) {
                return min(other, try earlier(firstOfProfile) ?? other)
            }
            addProfile.bind(1, profile.id)
            addProfile.bind(2, position.rank)
            // Seen before in this run: in this export, a repeat (the first wins).
            if try addProfile.execute() == 0, let first = try earlier(firstOfProfile) { return first }
            return try save(profile, rank: position.rank, at: date)
        }

        /// Notes the id of a record another shard takes.
        func writeOther(_ id: String, at position: RecordPosition) throws {
            addOther.bind(1, id)
            addOther.bind(2, position.rank)
            try addOther.execute()
        }

        private mutating func save(_ profile: Profile, rank: Int, at date: Date) throws -> Int? {
            storedProfile.bind(1, profile.id)
            if try storedProfile.firstRow({ ProfileRecords.isStored($0, profile) }) != true {
                ProfileRecords.bindSave(saveProfile, profile, at: date, readOrder: rank)
                if try saveProfile.execute() > 0 { profilesChanged += 1 }
            }
            guard let photo = profile.photo else { return nil }
            addSource.bind(1, rank)
            addSource.bind(2, photo.key)
            switch photo {
            case let .url(url, token):
                addSource.bind(3, url)
                addSource.bind(4, token ? 1 : 0)
                addSource.bind(5, nil as [UInt8]?)
            case .inline(let inline):
                addSource.bind(3, nil as String?)
                addSource.bind(4, 0)
                addSource.bind(5, inline.bytes)
            }
            try addSource.execute()
            return nil
        }
    }

    /// A row of `temp.run_source`: a source the run needs, at the rank of the first
    /// record that named it.
    package struct Source: Sendable {
        enum Columns: String, ColumnExpression, CaseIterable {
            case rank, key, url, sendMonicaToken, inline
        }

        package var rank: Int
        package var key: String
        package var photo: PhotoSource

        init(row: Row) {
            rank = row[Columns.rank]
            key = row[Columns.key]
            if let url = row[Columns.url] as String? {
                photo = .url(url, sendMonicaToken: row[Columns.sendMonicaToken] as Bool)
            } else {
                photo = .inline(InlinePhoto(bytes: [UInt8](row[Columns.inline] as Data)))
            }
        }
    }

    /// The next `limit` sources after `rank`, in rank order (the plan pages through them).
    static func sources(_ db: Database, after rank: Int, limit: Int) throws -> [Source] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM temp.run_source WHERE rank > ? ORDER BY rank LIMIT ?"),
                         arguments: [rank, limit]).map(Source.init(row:))
    }

    /// The next `limit` sources after `rank` whose last failure was of class `failureClass`,
    /// in rank order, with their entries and failures.
    static func sourcesFailed(_ db: Database, as failureClass: String, after rank: Int, limit: Int)
        throws -> (sources: [Source], entries: [String: CacheEntry], failures: [String: FailureRecord]) {
        // Most runs have none: one look at the failures, not a walk of a million sources.
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM failure WHERE class = ?)", arguments: [failureClass]) == true else {
            return ([], [:], [:])
        }
        let sources = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT s.* FROM temp.run_source s JOIN failure f ON f.key = s.key
            WHERE f.class = ? AND s.rank > ? ORDER BY s.rank LIMIT ?
            """), arguments: [failureClass, rank, limit]).map(Source.init(row:))
        guard let last = sources.last else { return ([], [:], [:]) }
        let keys = "SELECT s.key FROM temp.run_source s JOIN failure f ON f.key = s.key WHERE f.class = ? AND s.rank > ? AND s.rank <= ?"
        return (sources, try EntryRecords.entries(db, keysSQL: keys, arguments: [failureClass, rank, last.rank]),
                try FailureRecords.failures(db, keysSQL: keys, arguments: [failureClass, rank, last.rank]))
    }

    /// The entries of the sources ranked after `first` up to `last`, and their failures,
    /// by key: what the plan needs of a page of sources, in three queries.
    static func entriesAndFailures(_ db: Database, ranks first: Int, through last: Int)
        throws -> (entries: [String: CacheEntry], failures: [String: FailureRecord]) {
        let keys = "SELECT key FROM temp.run_source WHERE rank > ? AND rank <= ?"
        return (try EntryRecords.entries(db, keysSQL: keys, arguments: [first, last]),
                try FailureRecords.failures(db, keysSQL: keys, arguments: [first, last]))
    }

    static func counts(_ db: Database) throws -> (profiles: Int, sources: Int) {
        (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.run_profile") ?? 0,
         try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.run_source") ?? 0)
    }

    /// Marks every entry of this run's sources as accessed at its `AccessTime`, never
    /// moving an access earlier.
    static func touchSources(_ db: Database, started: Date) throws {
        try db.execute(sql: """
            UPDATE entry SET lastAccess = MAX(lastAccess, \(AccessTime.sql(started: "?1", rank: "s.rank")))
            FROM temp.run_source s WHERE s.key = entry.key
            """, arguments: [started.indexValue])
    }

    /// What the monogram plan needs of one of this run's profiles. `parts` (initials,
    /// glyph and colour, separated by 0x01) are bytes valid during the call only: a
    /// million rows are grouped into a few thousand monograms without a string per row.
    package struct ProfileSummary {
        package var rank: Int
        package var parts: [UInt8]
        package var hasPhotoSource: Bool
        package var photoCached: Bool

        /// Initials, glyph and colour as text (for the first profile of a group).
        package var fields: (initials: String, glyph: MonogramGlyph?, color: String) {
            let split = parts.split(separator: 1, maxSplits: 2, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            return (split[0], MonogramGlyph(rawValue: split.count > 1 ? split[1] : ""), split.count > 2 ? split[2] : "")
        }
    }

    /// This run's profiles, in id order (a walk along both primary keys), each with
    /// whether its photo is cached. Stepped through SQLite's C API (`RawStatement`), not
    /// GRDB's `Row` cursor (docs/performance-notes.md, "RawStatement").
    static func forEachProfile(_ db: Database, _ body: (ProfileSummary) throws -> Void) throws {
        let statement = try RawStatement(db, sql: """
            SELECT r.rank, p.initials, p.glyph, p.color, p.photoSource IS NOT NULL,
                   p.photoSource IS NOT NULL AND EXISTS (SELECT 1 FROM entry e WHERE e.key = p.photoSource)
            FROM temp.run_profile r JOIN profile p ON p.id = r.id
            """)
        var summary = ProfileSummary(rank: 0, parts: [], hasPhotoSource: false, photoCached: false)
        summary.parts.reserveCapacity(64)
        try statement.forEachRow { row in
            summary.rank = row.int(0)
            summary.parts.removeAll(keepingCapacity: true)
            summary.parts.append(contentsOf: row.bytes(1))
            summary.parts.append(1)
            summary.parts.append(contentsOf: row.bytes(2))
            summary.parts.append(1)
            summary.parts.append(contentsOf: row.bytes(3))
            summary.hasPhotoSource = row.int(4) != 0
            summary.photoCached = row.int(5) != 0
            try body(summary)
            return .next
        }
    }

    /// This run's profiles whose photo is `source`.
    static func profiles(_ db: Database, withPhoto source: String) throws -> [ProfileRecord] {
        try ProfileRecord.fetchAll(db.cachedStatement(sql: """
            SELECT p.* FROM profile p JOIN temp.run_profile r ON r.id = p.id WHERE p.photoSource = ?
            """), arguments: [source])
    }
}
