import Foundation
internal import GRDB

/// The cache's index: one SQLite file (`index.sqlite`, WAL mode) beside the cache files,
/// holding entries, their tier files, profiles, failures and access times. The only type
/// that opens it.
///
/// Readers (`lookup`, `stats`) read while a warm-up writes; writes are transactions, so a
/// process killed at any instant leaves the last committed state. The schema lives in
/// `migrator`, one named migration per version: a cache written by an older version is
/// upgraded by running the missing ones. A cache written before the index existed (its
/// `metadata.json` at schema 1 held everything) is imported once, under the lock.
final class CacheIndex: Sendable {
    static let fileName = "index.sqlite"
    /// SQLite's companions of the index in WAL mode.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// A `DatabasePool` (WAL: readers beside a writer), or, for a cache this process
    /// cannot write, a read-only `DatabaseQueue`.
    let database: any DatabaseWriter
    let directory: CacheDirectory
    /// Opened read-only: the cache's directory or index cannot be written here (a
    /// read-only mount, a cache built elsewhere and shipped, another user's directory).
    /// Reads answer as usual; writes fail with `StoreError.readOnly`.
    let isReadOnly: Bool

    private init(database: any DatabaseWriter, directory: CacheDirectory, readOnly: Bool = false) {
        self.database = database
        self.directory = directory
        isReadOnly = readOnly
    }

    /// Whether `name` is the index or one of SQLite's companion files.
    static func isIndexFile(_ name: String) -> Bool {
        name == fileName || companionSuffixes.contains { name == fileName + $0 }
    }

    /// Whether the cache has an index (an empty file, which SQLite would take for a new
    /// database, does not count: the cache is then taken over from metadata.json).
    static func exists(in directory: CacheDirectory) -> Bool {
        (directory.fileSize(fileName) ?? 0) > 0
    }

    /// How a process uses the index: a run or a prune (each commit durable before files
    /// are deleted; a large page cache), or lookups (an access time need not survive a
    /// power cut; a lookup touches a few pages).
    enum Role: Sendable {
        case maintenance, lookup
    }

    /// Opens the index of `directory`. When there is none yet: with a `metadata.json` of
    /// schema 1 (written by avatar-cache before the index), its entries, profiles,
    /// colours, failures and validators are imported; otherwise an empty index is created
    /// when `create`, else `StoreError.notACache`. Creating or importing needs the cache
    /// lock; the index is built under a temporary name and renamed, so a kill leaves
    /// either no index or a complete one.
    static func open(_ directory: CacheDirectory, create: Bool, role: Role = .maintenance) throws -> CacheIndex {
        if !exists(in: directory) {
            let legacy = try LegacyMetadataImport.read(directory)
            guard create || legacy != nil else {
                throw StoreError.notACache(path: directory.root.path)
            }
            try build(directory) { db in
                if let legacy { try LegacyMetadataImport.importing(legacy, into: db) }
            }
            let index = try CacheIndex(database: openWriter(directory.root.appendingPathComponent(fileName).path, role: role), directory: directory)
            // The apps' document in this version's schema from the start.
            if legacy != nil { try index.read { try MetadataDocument.write(from: $0, to: directory) } }
            return index
        }
        let path = directory.root.appendingPathComponent(fileName).path
        if !directory.isWritable(fileName) {
            return CacheIndex(database: try openReadOnly(path), directory: directory, readOnly: true)
        }
        return try CacheIndex(database: openWriter(path, role: role), directory: directory)
    }

    /// Opens the index of an existing cache for reading (lookup, stats) without the lock;
    /// a cache written before the index is imported first, under the lock (waiting up to
    /// `lockWait` seconds for a running warm-up).
    static func openExisting(_ directory: CacheDirectory, lockWait: TimeInterval = 30, role: Role = .lookup) throws -> CacheIndex {
        if exists(in: directory) { return try open(directory, create: false, role: role) }
        guard FileManager.default.fileExists(atPath: directory.metadataURL.path) else {
            throw StoreError.notACache(path: directory.root.path)
        }
        let lock = try CacheLock.acquire(in: directory, wait: lockWait)
        defer { lock.release() }
        return try open(directory, create: false, role: role)
    }

    private static func build(_ directory: CacheDirectory, _ fill: (Database) throws -> Void) throws {
        let temporary = "\(CacheDirectory.temporaryPrefix)index-\(UUID().uuidString).sqlite"
        let path = directory.root.appendingPathComponent(temporary).path
        do {
            let pool = try openWriter(path)
            try pool.write(fill)
            try pool.close()
        } catch {
            for suffix in [""] + companionSuffixes { try? directory.remove(temporary + suffix) }
            if case StoreError.io = error { throw error }
            throw StoreError.unreadableMetadata(path: directory.metadataURL.path, reason: "it could not be imported into a new index: \(error)")
        }
        guard rename(path, directory.root.appendingPathComponent(fileName).path) == 0 else {
            throw StoreError.io(path: path, reason: CacheDirectory.errnoText())
        }
        directory.syncDirectory()
    }

    /// A pool (readers beside the writer) for a run or a prune; one connection for lookups,
    /// which read a few rows and write an access time: opening a second connection was a
    /// tenth of a lookup process's time. Either reads while another process writes (WAL).
    private static func openWriter(_ path: String, role: Role = .maintenance) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.label = "avatar-cache index"
        // A lookup waits for a warm-up's transaction rather than failing.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            switch role {
            case .maintenance:
                // Each commit reaches the disk before the files it made unreferenced are deleted.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // A run touches every profile page: 32 MB of cache rather than 2.
                try db.execute(sql: "PRAGMA cache_size = -32000")
            case .lookup:
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        }
        do {
            let database: any DatabaseWriter = role == .lookup
                ? try DatabaseQueue(path: path, configuration: configuration)
                : try DatabasePool(path: path, configuration: configuration)
            try migrator.migrate(database)
            return database
        } catch let error as DatabaseError {
            throw StoreError.index(path: path, reason: error.message ?? "\(error)")
        }
    }

    /// Opens an index that cannot be written here. In WAL mode SQLite reads through the
    /// `-shm` file, which it cannot create in a read-only directory: where a writer
    /// elsewhere keeps one (a read-only mount of a cache being warmed) the index is read
    /// as usual; otherwise (a cache shipped read-only, whose last run checkpointed and
    /// closed it) it is opened `immutable`, which SQLite allows when nothing can change it.
    private static func openReadOnly(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.label = "avatar-cache index (read-only)"
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            do {
                queue = try DatabaseQueue(path: immutableURI(path), configuration: configuration)
            } catch let error as DatabaseError {
                throw StoreError.index(path: path, reason: error.message ?? "\(error)")
            }
        }
        do {
            // No migration can run here: an index of an older version is upgraded by the
            // first command that can write it.
            let applied = try queue.read(migrator.appliedIdentifiers)
            guard Set(migrator.migrations).subtracting(applied).isSubset(of: writersOnlyMigrations) else {
                throw StoreError.readOnly(path: path, action: "upgrade this cache's index, written by an earlier version")
            }
        } catch let error as DatabaseError {
            throw StoreError.index(path: path, reason: error.message ?? "\(error)")
        }
        return queue
    }

    /// `file:` URI of `path` with `immutable=1` (Debian's SQLite takes URIs as file names).
    static func immutableURI(_ path: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "/-._~")
        return "file:" + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path) + "?immutable=1"
    }

    static let evictionOrderMigration = "v4: monograms evicted before photos"

    static let placeholderMigration = "v5: placeholders"

    /// Migrations that only what writes the cache needs (an index a prune walks, columns a
    /// reader takes as empty when absent): a cache this process can only read is read
    /// without them.
    static let writersOnlyMigrations: Set<String> = [evictionOrderMigration, placeholderMigration]

    /// The schema, one migration per version.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: entries, files, profiles, failures") { db in
            // Dates are seconds since 1970 (REAL).
            try db.execute(sql: """
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
                CREATE INDEX entry_by_access ON entry(lastAccess, key);
                CREATE INDEX entry_by_content ON entry(contentSHA256);
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
                CREATE INDEX entryFile_by_name ON entryFile(filename);
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
                CREATE TABLE failure (
                    key TEXT PRIMARY KEY,
                    class TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    failedAt REAL NOT NULL,
                    retryAfter REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2: running total of the cache's bytes") { db in
            // Bytes of the distinct files the entries use (what the budget counts), kept by
            // triggers so a prune need not read every file row.
            try db.execute(sql: """
                CREATE TABLE cacheTotal (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL);
                INSERT INTO cacheTotal (id, bytes)
                    SELECT 1, COALESCE(SUM(size), 0) FROM (SELECT MAX(fileSize) AS size FROM entryFile GROUP BY filename);
                CREATE TRIGGER entryFile_counted AFTER INSERT ON entryFile
                WHEN (SELECT COUNT(*) FROM entryFile WHERE filename = NEW.filename) = 1
                BEGIN UPDATE cacheTotal SET bytes = bytes + NEW.fileSize WHERE id = 1; END;
                CREATE TRIGGER entryFile_freed AFTER DELETE ON entryFile
                WHEN NOT EXISTS (SELECT 1 FROM entryFile WHERE filename = OLD.filename)
                BEGIN UPDATE cacheTotal SET bytes = bytes - OLD.fileSize WHERE id = 1; END;
                """)
        }
        migrator.registerMigration("v3: settings and merge claims") { db in
            // `cacheSetting`: the cache's id and which shard of a split run it holds.
            // `mergeClaim`: in a cache made by `merge`, which merged cache (its origin)
            // brought each row, so merging it again replaces what it brought before.
            // `profile.readOrder`: the position, across the run's exports, of the record
            // that last wrote the row (the last record of an id wins): when shards of one
            // split run both hold an id, the merge keeps the row a single run would.
            try db.execute(sql: """
                CREATE TABLE cacheSetting (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                INSERT INTO cacheSetting (name, value) VALUES ('id', lower(hex(randomblob(16))));
                CREATE TABLE mergeClaim (
                    origin TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    key TEXT NOT NULL,
                    PRIMARY KEY (origin, kind, key)
                ) WITHOUT ROWID;
                CREATE INDEX mergeClaim_by_row ON mergeClaim(kind, key);
                ALTER TABLE profile ADD COLUMN readOrder INTEGER;
                """)
        }
        migrator.registerMigration(evictionOrderMigration) { db in
            try db.execute(sql: "CREATE INDEX entry_by_eviction ON entry(\(Self.evictionOrder.joined(separator: ", ")))")
        }
        migrator.registerMigration(placeholderMigration) { db in
            // A photo's ThumbHash (base64) and average colour ("#RRGGBB"), a monogram's
            // colour; NULL for a photo decoded by an earlier version.
            try db.execute(sql: """
                ALTER TABLE entry ADD COLUMN placeholderHash TEXT;
                ALTER TABLE entry ADD COLUMN placeholderColor TEXT;
                """)
        }
        return migrator
    }

    /// A read transaction, for the store's targets (Index, Store) alone: no GRDB type is in
    /// a public signature, and the layers above ask the store by intent (`RunStore`).
    /// The order entries are evicted in, the one rule the prune walks and the index
    /// `entry_by_eviction` holds: monograms first (`kind = 'photo'` is 0; a run draws one
    /// again from the index without the network), then photos, each least recently
    /// accessed first.
    static let evictionOrder = ["kind = 'photo'", "lastAccess", "key"]

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch let error as DatabaseError { throw wrap(error) }
    }

    /// A write transaction, for the store's targets alone (see `read`).
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try refuseIfReadOnly()
        do { return try database.write(body) } catch let error as DatabaseError { throw wrap(error) }
    }

    private func refuseIfReadOnly() throws {
        if isReadOnly { throw StoreError.readOnly(path: directory.root.path, action: "change it") }
    }

    /// Runs `body` in one write transaction with another cache's index attached as
    /// `alias` (which the body only reads).
    func writeAttaching<T>(_ other: CacheDirectory, as alias: String, _ body: (Database) throws -> T) throws -> T {
        try refuseIfReadOnly()
        do {
            return try database.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS \(alias)", arguments: [other.root.appendingPathComponent(Self.fileName).path])
                defer { try? db.execute(sql: "DETACH DATABASE \(alias)") }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch let error as DatabaseError { throw wrap(error) }
    }

    private func wrap(_ error: DatabaseError) -> StoreError {
        .index(path: directory.root.appendingPathComponent(Self.fileName).path, reason: error.message ?? "\(error)")
    }

    /// Writes in the background, in order with every other write; `completion` hears of
    /// the outcome (on the writer's queue).
    func writeLater(_ body: @escaping @Sendable (Database) throws -> Void, completion: @escaping @Sendable (Error?) -> Void) {
        if isReadOnly { return completion(StoreError.readOnly(path: directory.root.path, action: "change it")) }
        database.asyncWrite(body) { [self] _, result in
            if case .failure(let error) = result {
                completion((error as? DatabaseError).map(wrap) ?? error)
            } else {
                completion(nil)
            }
        }
    }

    /// Folds the WAL back into the database file and empties it (at the end of a run:
    /// GRDB closes the writer before its read-only readers, so SQLite itself does not).
    func checkpoint() {
        guard !isReadOnly else { return }
        _ = try? database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    }

    func close() {
        try? database.close()
    }
}

extension Date {
    /// How the index stores a date.
    var indexValue: Double { timeIntervalSince1970 }
    init(indexValue: Double) { self.init(timeIntervalSince1970: indexValue) }
}

extension CacheIndex {
    /// The whole index in memory, each profile pointed at what it shows. For tests and
    /// small caches: the pipeline reads by query.
    func snapshot() throws -> CacheMetadata {
        try read { db in
            var metadata = CacheMetadata()
            try EntryRecords.forEach(db) { key, entry in metadata.entries[key] = entry }
            try ProfileRecords.forEach(db) { row in
                metadata.profiles[row.id] = CachedProfile(
                    displayName: row.displayName, cachedInitials: row.initials, glyph: row.glyph,
                    avatarColorHex: row.color, textColorHex: row.textColor, photoSource: row.photoSource,
                    monogramSource: row.monogram.key, kind: .notCached, cachedImagePath: [:], cachedImageLastAccess: nil,
                    lastSeen: row.updatedAt)
            }
            metadata.failures = try FailureRecords.all(db)
            metadata.refreshProfiles()
            return metadata
        }
    }
}
