import Foundation
internal import GRDB

/// The `entry` and `entryFile` tables (`EntryRecord`, `EntryFileRecord`): each source's
/// cached images. The queries are named for the question they answer; each takes the
/// database of a read or a write. The per-source ones (a run asks them once per source)
/// run through cached statements, decoded by the records.
enum EntryRecords {
    /// One entry with its files, or nil.
    static func entry(_ db: Database, key: String) throws -> CacheEntry? {
        guard let record = try EntryRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM entry WHERE key = ?"), arguments: [key]) else {
            return nil
        }
        return record.entry(files: try files(db, key: key))
    }

    static func files(_ db: Database, key: String) throws -> [EntryFileRecord] {
        try EntryFileRecord.fetchAll(db.cachedStatement(sql: "SELECT * FROM entryFile WHERE entryKey = ?"), arguments: [key])
    }

    /// Every entry in key order, with its files, one at a time (memory flat): the file
    /// rows in entry order, each with its entry.
    static func forEach(_ db: Database, _ body: (String, CacheEntry) throws -> Void) throws {
        let statement = try db.makeStatement(sql: """
            SELECT f.*, e.* FROM entryFile f JOIN entry e ON e.key = f.entryKey ORDER BY f.entryKey, f.tier
            """)
        try forEachEntry(statement, arguments: [], body)
    }

    /// The entries whose keys `keysSQL` (a query of one column) selects, with their files,
    /// by key: a page of sources' entries in two queries instead of two a source.
    static func entries(_ db: Database, keysSQL: String, arguments: StatementArguments) throws -> [String: CacheEntry] {
        let statement = try db.cachedStatement(sql: """
            SELECT f.*, e.* FROM entryFile f JOIN entry e ON e.key = f.entryKey
            WHERE f.entryKey IN (\(keysSQL)) ORDER BY f.entryKey, f.tier
            """)
        var entries: [String: CacheEntry] = [:]
        try forEachEntry(statement, arguments: arguments) { key, entry in entries[key] = entry }
        return entries
    }

    /// Groups rows of a file joined with its entry (ordered by entry) into entries. An
    /// entry without files is not one a reader can use, and is left out.
    private static func forEachEntry(_ statement: Statement, arguments: StatementArguments,
                                     _ body: (String, CacheEntry) throws -> Void) throws {
        let names = statement.columnNames
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        let filePositions = EntryFileRecord.Positions(columnNames: names)
        let entryPositions = EntryRecord.Positions(columnNames: names)
        var current: EntryRecord?
        var files: [EntryFileRecord] = []
        while let row = try rows.next() {
            let file = EntryFileRecord(row: row, at: filePositions)
            if let pending = current, pending.key != file.entryKey {
                try body(pending.key, pending.entry(files: files))
                files = []
                current = nil
            }
            if current == nil { current = EntryRecord(row: row, at: entryPositions) }
            files.append(file)
        }
        if let pending = current { try body(pending.key, pending.entry(files: files)) }
    }

    /// Stores `entry` under `key`, replacing what was there. Returns the files the old
    /// version used that no entry uses any more (delete them once the cache's documents
    /// no longer name them).
    @discardableResult
    static func save(_ db: Database, key: String, entry: CacheEntry) throws -> [CacheFile] {
        let previous = try files(db, key: key)
        // Deleting the entry deletes its files' rows (ON DELETE CASCADE). A cached
        // statement: the query interface's deleteOne prepares its SQL anew each call.
        try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [key])
        try insert(db, EntryRecord(key: key, entry: entry))
        for (tier, file) in entry.files {
            guard let tier = Int(tier) else { continue }
            try insert(db, EntryFileRecord(entryKey: key, tier: tier, file: file))
        }
        return try unreferenced(db, previous.map(\.file))
    }

    /// The row as the record's `insert` writes it, through a cached statement: `insert`
    /// encodes the record into a container and looks its statement up by its columns
    /// each call, a good part of a warm's commits. An entry without a placeholder goes
    /// the record's way (its row names no placeholder column: `EntryRecord.encode`).
    private static func insert(_ db: Database, _ record: EntryRecord) throws {
        guard let placeholder = record.placeholder else { return try record.insert(db) }
        try db.cachedStatement(sql: insertEntrySQL)
            .execute(arguments: [
                record.key, record.kind.rawValue, record.contentSHA256, record.lastAccess.indexValue, record.fetchedAt.indexValue,
                record.freshUntil?.indexValue, record.etag, record.lastModified, record.sourceBytes, record.sourceFormat?.rawValue,
                record.sourceWidth, record.sourceHeight, placeholder.thumbHash, placeholder.color,
            ])
    }

    private static let insertEntrySQL = insertSQL(EntryRecord.databaseTableName, EntryRecord.Columns.allCases.map(\.rawValue))
    private static let insertFileSQL = insertSQL(EntryFileRecord.databaseTableName, EntryFileRecord.Columns.allCases.map(\.rawValue))

    private static func insertSQL(_ table: String, _ columns: [String]) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    }

    private static func insert(_ db: Database, _ record: EntryFileRecord) throws {
        try db.cachedStatement(sql: insertFileSQL)
            .execute(arguments: [record.entryKey, record.tier, record.filename, record.width, record.height, record.fileSize, record.sha256])
    }

    /// Removes an entry; returns its files no other entry uses.
    @discardableResult
    static func delete(_ db: Database, key: String) throws -> [CacheFile] {
        let previous = try files(db, key: key)
        try EntryRecord.deleteOne(db, key: key)
        return try unreferenced(db, previous.map(\.file))
    }

    /// Of `files`, each once, those no entry uses.
    static func unreferenced(_ db: Database, _ files: some Sequence<CacheFile>) throws -> [CacheFile] {
        var seen = Set<String>()
        var result: [CacheFile] = []
        for file in files where seen.insert(file.filename).inserted {
            if try !isReferenced(db, filename: file.filename) { result.append(file) }
        }
        return result.sorted { $0.filename < $1.filename }
    }

    static func isReferenced(_ db: Database, filename: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM entryFile WHERE filename = ? LIMIT 1"), arguments: [filename]) != nil
    }

    static func isCached(_ db: Database, key: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM entry WHERE key = ?"), arguments: [key]) != nil
    }

    /// Moves an entry's last access later (never earlier: a lookup's newer access wins).
    /// A cached statement, not the query interface's `updateAll`, which builds its SQL
    /// anew each call: a re-run touches every distinct monogram it shows
    /// (docs/performance-notes.md, "Entry access times").
    static func touch(_ db: Database, key: String, at date: Date) throws {
        try db.cachedStatement(sql: "UPDATE entry SET lastAccess = ?1 WHERE key = ?2 AND lastAccess < ?1")
            .execute(arguments: [date.indexValue, key])
    }

    /// A few entries whose content is `contentSHA256` (any source), to reuse their files.
    static func entries(_ db: Database, contentSHA256: String) throws -> [CacheEntry] {
        let records = try EntryRecord.fetchAll(db.cachedStatement(sql: "SELECT * FROM entry WHERE contentSHA256 = ? LIMIT 4"),
                                               arguments: [contentSHA256])
        return try records.map { $0.entry(files: try files(db, key: $0.key)) }
    }

    /// Bytes of the files the index references, each file once: what the budget counts.
    static func cacheBytes(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT bytes FROM cacheTotal WHERE id = 1") ?? 0
    }

    /// Sets the running total from the file rows (`verify --repair`).
    static func recountCacheBytes(_ db: Database) throws {
        try db.execute(sql: "UPDATE cacheTotal SET bytes = ? WHERE id = 1", arguments: [try cacheBytesCounted(db)])
    }

    /// The same, counted from the file rows (`verify` checks the running total against it).
    static func cacheBytesCounted(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM (SELECT MAX(fileSize) AS size FROM entryFile GROUP BY filename)") ?? 0
    }

    static func count(_ db: Database) throws -> Int {
        try EntryRecord.fetchCount(db)
    }

    /// Every file name the index references (bounded by the budget: the cache's files).
    static func allFileNames(_ db: Database) throws -> Set<String> {
        try EntryFileRecord.select(EntryFileRecord.Columns.filename, as: String.self).distinct().fetchSet(db)
    }
}

/// The `failure` table (`FailureRow`): sources that failed lately, not asked for again
/// before `retryAfter`.
enum FailureRecords {
    /// The failures of the keys `keysSQL` (a query of one column) selects, by key.
    static func failures(_ db: Database, keysSQL: String, arguments: StatementArguments) throws -> [String: FailureRecord] {
        let statement = try db.cachedStatement(sql: "SELECT * FROM failure WHERE key IN (\(keysSQL))")
        var failures: [String: FailureRecord] = [:]
        for row in try FailureRow.fetchAll(statement, arguments: arguments) { failures[row.key] = row.failure }
        return failures
    }

    static func save(_ db: Database, key: String, failure: FailureRecord) throws {
        try FailureRow(key: key, failure: failure).insert(db, onConflict: .replace)
    }

    static func clear(_ db: Database, key: String) throws {
        // A cached statement: `deleteOne` builds its SQL anew each call (every saved entry clears).
        try db.cachedStatement(sql: "DELETE FROM failure WHERE key = ?").execute(arguments: [key])
    }

    /// Forgets failures whose retry time has come.
    static func expire(_ db: Database, before date: Date) throws {
        try FailureRow.filter(FailureRow.Columns.retryAfter <= date.indexValue).deleteAll(db)
    }

    static func count(_ db: Database) throws -> Int {
        try FailureRow.fetchCount(db)
    }

    /// Every failure remembered, by source key.
    static func all(_ db: Database) throws -> [String: FailureRecord] {
        var failures: [String: FailureRecord] = [:]
        let rows = try FailureRow.fetchCursor(db)
        while let row = try rows.next() { failures[row.key] = row.failure }
        return failures
    }
}
