import Foundation
import GRDB

/// The `entry` and `entryFile` tables: each source's cached images. The queries are
/// named for the question they answer; each takes the database of a read or a write.
enum EntryRecords {
    static let columns = "key, kind, contentSHA256, lastAccess, fetchedAt, freshUntil, etag, lastModified, sourceBytes, sourceFormat, sourceWidth, sourceHeight"

    /// One entry with its files, or nil.
    static func entry(_ db: Database, key: String) throws -> CacheEntry? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM entry WHERE key = ?"), arguments: [key]) else {
            return nil
        }
        return entry(row, files: try files(db, key: key))
    }

    static func files(_ db: Database, key: String) throws -> [String: CacheFile] {
        var files: [String: CacheFile] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT tier, filename, width, height, fileSize, sha256 FROM entryFile WHERE entryKey = ?"),
                                       arguments: [key])
        while let row = try rows.next() { files[String(row[0] as Int)] = file(row, at: 1) }
        return files
    }

    static func file(_ row: Row, at offset: Int) -> CacheFile {
        CacheFile(filename: row[offset], width: row[offset + 1], height: row[offset + 2], fileSize: row[offset + 3], sha256: row[offset + 4])
    }

    /// An entry from a row of `columns` and its files.
    static func entry(_ row: Row, files: [String: CacheFile]) -> CacheEntry {
        let largest = files.keys.max { (Int($0) ?? 0) < (Int($1) ?? 0) }
        let distinct = Dictionary(files.values.map { ($0.filename, $0.fileSize) }, uniquingKeysWith: { a, _ in a })
        return CacheEntry(
            kind: AvatarKind(rawValue: row[1]) ?? .photo,
            filename: largest.flatMap { files[$0]?.filename } ?? "",
            lastAccess: Date(indexValue: row[3]),
            fileSize: distinct.values.reduce(0, +),
            contentSHA256: row[2],
            sourceBytes: row[8],
            sourceFormat: (row[9] as String?).flatMap(ImageFormat.init(rawValue:)),
            sourceWidth: row[10], sourceHeight: row[11],
            fetchedAt: Date(indexValue: row[4]),
            freshUntil: (row[5] as Double?).map(Date.init(indexValue:)),
            etag: row[6], lastModified: row[7],
            files: files
        )
    }

    /// Every entry in key order, with its files, one at a time (memory flat).
    static func forEach(_ db: Database, _ body: (String, CacheEntry) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT e.key, e.kind, e.contentSHA256, e.lastAccess, e.fetchedAt, e.freshUntil, e.etag, e.lastModified,
                   e.sourceBytes, e.sourceFormat, e.sourceWidth, e.sourceHeight,
                   f.tier, f.filename, f.width, f.height, f.fileSize, f.sha256
            FROM entry e JOIN entryFile f ON f.entryKey = e.key ORDER BY e.key, f.tier
            """)
        var current: (key: String, row: Row)?
        var files: [String: CacheFile] = [:]
        while let row = try rows.next() {
            let key: String = row[0]
            if let pending = current, pending.key != key {
                try body(pending.key, entry(pending.row, files: files))
                files = [:]
                current = nil
            }
            if current == nil { current = (key, row.copy()) }
            files[String(row[12] as Int)] = file(row, at: 13)
        }
        if let pending = current { try body(pending.key, entry(pending.row, files: files)) }
    }

    /// Stores `entry` under `key`, replacing what was there. Returns the files the old
    /// version used that no entry uses any more (delete them once the cache's documents
    /// no longer name them).
    @discardableResult
    static func save(_ db: Database, key: String, entry: CacheEntry) throws -> [CacheFile] {
        let previous = try files(db, key: key)
        try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [key])
        try db.cachedStatement(sql: "INSERT INTO entry (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").execute(arguments: [
            key, entry.kind.rawValue, entry.contentSHA256, entry.lastAccess.indexValue, entry.fetchedAt.indexValue,
            entry.freshUntil?.indexValue, entry.etag, entry.lastModified, entry.sourceBytes, entry.sourceFormat?.rawValue,
            entry.sourceWidth, entry.sourceHeight,
        ])
        let insertFile = try db.cachedStatement(sql: "INSERT INTO entryFile (entryKey, tier, filename, width, height, fileSize, sha256) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for (tier, file) in entry.files {
            guard let tier = Int(tier) else { continue }
            try insertFile.execute(arguments: [key, tier, file.filename, file.width, file.height, file.fileSize, file.sha256])
        }
        return try unreferenced(db, previous.values)
    }

    /// Removes an entry; returns its files no other entry uses.
    @discardableResult
    static func delete(_ db: Database, key: String) throws -> [CacheFile] {
        let previous = try files(db, key: key)
        try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [key])
        return try unreferenced(db, previous.values)
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
    static func touch(_ db: Database, key: String, at date: Date) throws {
        try db.cachedStatement(sql: "UPDATE entry SET lastAccess = ? WHERE key = ? AND lastAccess < ?")
            .execute(arguments: [date.indexValue, key, date.indexValue])
    }

    /// A few entries whose content is `contentSHA256` (any source), to reuse their files.
    static func entries(_ db: Database, contentSHA256: String) throws -> [CacheEntry] {
        let keys = try String.fetchAll(db.cachedStatement(sql: "SELECT key FROM entry WHERE contentSHA256 = ? LIMIT 4"), arguments: [contentSHA256])
        return try keys.compactMap { try entry(db, key: $0) }
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
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") ?? 0
    }

    /// Every file name the index references (bounded by the budget: the cache's files).
    static func allFileNames(_ db: Database) throws -> Set<String> {
        var names = Set<String>()
        let rows = try String.fetchCursor(db, sql: "SELECT DISTINCT filename FROM entryFile")
        while let name = try rows.next() { names.insert(name) }
        return names
    }
}

/// The `failure` table: sources that failed lately, not asked for again before `retryAfter`.
enum FailureRecords {
    static func failure(_ db: Database, key: String) throws -> FailureRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT class, reason, failedAt, retryAfter FROM failure WHERE key = ?"), arguments: [key]) else {
            return nil
        }
        return record(row)
    }

    static func record(_ row: Row, at offset: Int = 0) -> FailureRecord {
        FailureRecord(failureClass: FailureClass(rawValue: row[offset]) ?? .network, reason: row[offset + 1],
                      failedAt: Date(indexValue: row[offset + 2]), retryAfter: Date(indexValue: row[offset + 3]))
    }

    static func save(_ db: Database, key: String, failure: FailureRecord) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO failure (key, class, reason, failedAt, retryAfter) VALUES (?, ?, ?, ?, ?)").execute(arguments: [
            key, failure.failureClass.rawValue, failure.reason, failure.failedAt.indexValue, failure.retryAfter.indexValue,
        ])
    }

    static func clear(_ db: Database, key: String) throws {
        try db.cachedStatement(sql: "DELETE FROM failure WHERE key = ?").execute(arguments: [key])
    }

    /// Forgets failures whose retry time has come.
    static func expire(_ db: Database, before date: Date) throws {
        try db.execute(sql: "DELETE FROM failure WHERE retryAfter <= ?", arguments: [date.indexValue])
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM failure") ?? 0
    }
}
