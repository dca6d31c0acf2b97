import Foundation
import GRDB

/// A run's working set, in temporary tables of the index's writer connection (gone with
/// it; never in the cache file): the profiles and distinct photo sources of this run's
/// exports, in priority order. They let a run of a million profiles plan by query with
/// flat memory, instead of holding every record.
///
/// `rank` is the record's position across the run's exports (the readers emit in
/// priority order: most recently active conversations first); the first record of an
/// id or a source gives its rank.
enum RunTables {
    static func create(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS run_profile (rank INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
            CREATE TEMP TABLE IF NOT EXISTS run_source (
                rank INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, url TEXT, sendMonicaToken INTEGER NOT NULL, inline BLOB);
            DELETE FROM temp.run_profile;
            DELETE FROM temp.run_source;
            """)
    }

    /// Records a profile of this run; false when its id came earlier in the run.
    static func addProfile(_ db: Database, id: String, rank: Int) throws -> Bool {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO temp.run_profile (rank, id) VALUES (?, ?)").execute(arguments: [rank, id])
        return db.changesCount > 0
    }

    /// Records a photo source of this run; false when it came earlier (a URL one record
    /// marks for the Monica token keeps it).
    static func addSource(_ db: Database, _ photo: PhotoSource, rank: Int) throws -> Bool {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO temp.run_source (rank, key, url, sendMonicaToken, inline) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET sendMonicaToken = MAX(sendMonicaToken, excluded.sendMonicaToken)
            """)
        switch photo {
        case let .url(url, token):
            try statement.execute(arguments: [rank, photo.key, url, token ? 1 : 0, nil])
        case .inline(let inline):
            try statement.execute(arguments: [rank, photo.key, nil, 0, Data(inline.bytes)])
        }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT rank FROM temp.run_source WHERE key = ?"), arguments: [photo.key]) == rank
    }

    struct Source {
        var rank: Int
        var key: String
        var photo: PhotoSource
    }

    /// Sources after `rank`, in rank order, at most `limit`.
    static func sources(_ db: Database, after rank: Int, limit: Int) throws -> [Source] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT rank, key, url, sendMonicaToken, inline FROM temp.run_source WHERE rank > ? ORDER BY rank LIMIT ?"),
                                       arguments: [rank, limit])
        var sources: [Source] = []
        while let row = try rows.next() {
            let photo: PhotoSource
            if let url = row[2] as String? {
                photo = .url(url, sendMonicaToken: (row[3] as Int) != 0)
            } else {
                photo = .inline(InlinePhoto(bytes: [UInt8](row[4] as Data)))
            }
            sources.append(Source(rank: row[0], key: row[1], photo: photo))
        }
        return sources
    }

    static func counts(_ db: Database) throws -> (profiles: Int, sources: Int) {
        (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.run_profile") ?? 0,
         try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.run_source") ?? 0)
    }

    /// Marks every entry of this run's sources as accessed at `started`, a millisecond
    /// earlier per rank (so the first in priority order are the most recently used),
    /// never moving an access earlier.
    static func touchSources(_ db: Database, started: Date) throws {
        try db.execute(sql: """
            UPDATE entry SET lastAccess = MAX(lastAccess, ?1 - s.rank / 1000.0)
            FROM temp.run_source s WHERE s.key = entry.key
            """, arguments: [started.indexValue])
    }

    /// This run's profiles in rank order, each with whether its photo is cached.
    static func forEachProfile(_ db: Database, _ body: (_ rank: Int, _ profile: ProfileRecords.Row, _ photoCached: Bool) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT r.rank, p.id, p.displayName, p.initials, p.glyph, p.color, p.photoSource, p.updatedAt, e.key IS NOT NULL
            FROM temp.run_profile r JOIN profile p ON p.id = r.id LEFT JOIN entry e ON e.key = p.photoSource
            ORDER BY r.rank
            """)
        while let row = try rows.next() {
            let profile = ProfileRecords.Row(
                id: row[1], displayName: row[2], initials: row[3], glyph: (row[4] as String?).flatMap(MonogramGlyph.init(rawValue:)),
                color: row[5], photoSource: row[6], updatedAt: Date(indexValue: row[7]))
            try body(row[0], profile, row[8])
        }
    }

    /// This run's profiles whose photo is `source`.
    static func profiles(_ db: Database, withPhoto source: String) throws -> [ProfileRecords.Row] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(ProfileRecords.columns.split(separator: ",").map { "p." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM profile p JOIN temp.run_profile r ON r.id = p.id WHERE p.photoSource = ?
            """), arguments: [source]).map(ProfileRecords.row)
    }

    /// How many of this run's profiles show their photo.
    static func profilesShowingPhoto(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM temp.run_profile r JOIN profile p ON p.id = r.id JOIN entry e ON e.key = p.photoSource
            """) ?? 0
    }
}
