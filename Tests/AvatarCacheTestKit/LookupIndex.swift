import CSQLite
import Foundation

/// A cache as the lookup library reads it, written row by row through the system's SQLite
/// without the store: `index.sqlite` (WAL, as the writers keep it) with the three tables
/// the lookup reads, in the columns the writers' migrations give them (`CacheIndex.migrator`,
/// AvatarCacheStore: `profile`, `entry` with its placeholder columns, `entryFile`), and a
/// file for each tier. For the tests of the lookup library and the `lookup` command, which
/// sit beside the store, not above it; the store's own tests read what it writes through
/// the lookup.
package final class LookupIndex {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The cache directory.
    package let directory: URL
    private var connection: OpaquePointer?
    private var entries = 0

    package static let fileName = "index.sqlite"

    /// A new cache in `directory` (made if missing) with an empty index; `placeholders`:
    /// whether `entry` has the placeholder columns (an index written before them has not).
    package init(in directory: URL, placeholders: Bool = true) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var opened: OpaquePointer?
        let path = directory.appendingPathComponent(Self.fileName).path
        guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let opened else {
            if let opened { sqlite3_close_v2(opened) }
            throw Failure(description: "cannot create \(path)")
        }
        connection = opened
        sqlite3_busy_timeout(opened, 10_000)
        try execute("PRAGMA journal_mode = WAL")
        try execute("""
            CREATE TABLE entry (
                key TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                contentSHA256 TEXT NOT NULL,
                lastAccess REAL NOT NULL,
                fetchedAt REAL NOT NULL,
                freshUntil REAL,
                etag TEXT,
                lastModified TEXT,
                sourceBytes INTEGER,
                sourceFormat TEXT,
                sourceWidth INTEGER,
                sourceHeight INTEGER
            );
            CREATE TABLE entryFile (
                entryKey TEXT NOT NULL REFERENCES entry(key) ON DELETE CASCADE,
                tier INTEGER NOT NULL,
                filename TEXT NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                fileSize INTEGER NOT NULL,
                sha256 TEXT,
                PRIMARY KEY (entryKey, tier)
            ) WITHOUT ROWID;
            CREATE TABLE profile (
                id TEXT PRIMARY KEY,
                displayName TEXT NOT NULL,
                initials TEXT NOT NULL,
                glyph TEXT,
                color TEXT NOT NULL,
                photoSource TEXT,
                updatedAt REAL NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX profile_by_photo ON profile(photoSource);
            """)
        if placeholders {
            try execute("ALTER TABLE entry ADD COLUMN placeholderHash TEXT; ALTER TABLE entry ADD COLUMN placeholderColor TEXT")
        }
    }

    deinit { close() }

    /// Closes the index (the WAL folded back into it).
    package func close() {
        if let connection { sqlite3_close_v2(connection) }
        connection = nil
    }

    /// A profile row.
    package func addProfile(id: String, displayName: String, initials: String, glyph: String? = nil,
                            color: String, photoSource: String? = nil) throws {
        try run("INSERT INTO profile (id, displayName, initials, glyph, color, photoSource, updatedAt) VALUES (?, ?, ?, ?, ?, ?, 0)",
                [id, displayName, initials, glyph, color, photoSource])
    }

    /// An entry of `kind` ("photo" or "monogram") with a file per tier (tier: the file's
    /// side), each written into the cache (its name the content hash and the tier, as the
    /// writers name them); returns the files by tier.
    @discardableResult
    package func addEntry(key: String, kind: String, tiers: [Int: Int], placeholderHash: String? = nil,
                          placeholderColor: String? = nil, lastAccess: Double = 1_000) throws -> [Int: URL] {
        entries += 1
        let hash = String(format: "%064x", entries)
        let hasPlaceholders = try columns(of: "entry").contains("placeholderHash")
        if hasPlaceholders {
            try run("INSERT INTO entry (key, kind, contentSHA256, lastAccess, fetchedAt, placeholderHash, placeholderColor) VALUES (?, ?, ?, ?, 0, ?, ?)",
                    [key, kind, hash, String(lastAccess), placeholderHash, placeholderColor])
        } else {
            try run("INSERT INTO entry (key, kind, contentSHA256, lastAccess, fetchedAt) VALUES (?, ?, ?, ?, 0)", [key, kind, hash, String(lastAccess)])
        }
        var files: [Int: URL] = [:]
        for (tier, side) in tiers {
            let name = "\(hash)-\(tier).\(kind == "monogram" ? "png" : "jpg")"
            let bytes = Data("\(kind) \(key) at \(tier)".utf8)
            let file = directory.appendingPathComponent(name)
            try bytes.write(to: file)
            try run("INSERT INTO entryFile (entryKey, tier, filename, width, height, fileSize) VALUES (?, ?, ?, ?, ?, ?)",
                    [key, String(tier), name, String(side), String(side), String(bytes.count)])
            files[tier] = file
        }
        return files
    }

    /// The entry's last access as the index holds it (what the prune reads).
    package func lastAccess(of key: String) throws -> Double? {
        guard let connection else { throw Failure(description: "closed") }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "SELECT lastAccess FROM entry WHERE key = ?", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, key, -1, Self.transient)
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_double(statement, 0) : nil
    }

    /// Runs SQL without arguments (several statements allowed).
    package func execute(_ sql: String) throws {
        guard let connection else { throw Failure(description: "closed") }
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(connection, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error"
            sqlite3_free(message)
            throw Failure(description: "\(text): \(sql)")
        }
    }

    private func columns(of table: String) throws -> Set<String> {
        guard let connection else { throw Failure(description: "closed") }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "SELECT name FROM pragma_table_info('\(table)')", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        var names: Set<String> = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let name = sqlite3_column_text(statement, 0) { names.insert(String(cString: name)) }
        }
        return names
    }

    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    /// One statement, its arguments bound as text (nil as NULL); SQLite's column affinity
    /// stores numbers as numbers.
    private func run(_ sql: String, _ arguments: [String?]) throws {
        guard let connection else { throw Failure(description: "closed") }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: "\(String(cString: sqlite3_errmsg(connection))): \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            if let argument {
                sqlite3_bind_text(statement, Int32(index + 1), argument, -1, Self.transient)
            } else {
                sqlite3_bind_null(statement, Int32(index + 1))
            }
        }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw Failure(description: "\(String(cString: sqlite3_errmsg(connection))): \(sql)")
        }
    }
}
