import AvatarCacheModel
import AvatarCacheMonograms
import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One read-only connection to a cache's `index.sqlite`, through SQLite's C API (no
/// GRDB: the lookup library builds and links without it), with its few statements
/// prepared once. The schema is the writers' (`CacheIndex.migrator`, AvatarCacheStore):
/// the tables `profile`, `entry` and `entryFile`, read by column name. One caller at a
/// time: `CacheLookup`'s pool hands it to one.
// Why @unchecked: SQLite's connection and statements (C handles), moved between threads
// only through the pool's lock.
final class IndexReader: @unchecked Sendable {
    private let connection: OpaquePointer
    private let profileStatement: OpaquePointer
    /// Prepared when first used (a `lookup` process asking for a user needs neither).
    private var ownerPrepared: OpaquePointer?
    private let entryStatement: OpaquePointer
    private let filesStatement: OpaquePointer
    private var usersPrepared: OpaquePointer?
    /// Nil for an index without the `cacheSetting` table (its writer recorded no sizes).
    private let decodeSizesStatement: OpaquePointer?
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    let file: URL

    /// A profile row: what the export said of a user.
    struct Profile {
        var id: String
        var displayName: String
        var initials: String
        var glyph: MonogramGlyph?
        var color: String
        var photoSource: String?
    }

    /// An entry with the tiers' files: tier -> (file name, side).
    struct Entry {
        var kind: AvatarKind
        var placeholder: Placeholder?
        var files: [Int: (name: String, side: Int)]
    }

    /// Opens `file` read-only. A cache this process cannot write (a read-only mount,
    /// another user's directory) that SQLite cannot read so (no `-shm` to share: shipped
    /// after its last run closed it) is opened `immutable`, as SQLite allows when nothing
    /// can change it; anywhere else a failure is the index's.
    init(file: URL, directory: URL) throws {
        self.file = file
        var opened: OpaquePointer?
        var result = sqlite3_open_v2(file.path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        // A warm-up's checkpoint is waited for (up to 10 s), from the first read on.
        if let opened { sqlite3_busy_timeout(opened, 10_000) }
        let writable = access(directory.path, W_OK) == 0 && access(file.path, W_OK) == 0
        if result == SQLITE_OK, let handle = opened, !writable, Self.probe(handle) != SQLITE_OK {
            sqlite3_close_v2(handle)
            opened = nil
            result = sqlite3_open_v2(Self.immutableURI(file.path), &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nil)
        }
        guard result == SQLITE_OK, let handle = opened else {
            let reason = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite could not open it (\(result))"
            if let opened { sqlite3_close_v2(opened) }
            throw LookupError.damagedIndex(file: file, reason: reason)
        }
        connection = handle
        do {
            // One statement reads the schema (a file that is not an index fails here, in
            // SQLite's words) and the three tables' columns.
            let columns = try Self.columns(of: ["profile", "entry", "entryFile", "cacheSetting"], handle, file: file)
            let entryColumns = columns["entry", default: []]
            guard columns["profile", default: []].isSuperset(of: ["id", "displayName", "initials", "glyph", "color", "photoSource"]),
                  entryColumns.isSuperset(of: ["key", "kind"]),
                  columns["entryFile", default: []].isSuperset(of: ["entryKey", "tier", "filename", "width"]) else {
                throw LookupError.needsUpgrade(directory: directory, reason: "has an index without the tables of this version")
            }
            // Placeholders came with the index's fifth version; older entries have none.
            let placeholder = entryColumns.contains("placeholderHash") ? "placeholderHash, placeholderColor" : "NULL, NULL"
            profileStatement = try Self.prepare(handle, "SELECT id, displayName, initials, glyph, color, photoSource FROM profile WHERE id = ?1", file: file)
            entryStatement = try Self.prepare(handle, "SELECT kind, \(placeholder) FROM entry WHERE key = ?1", file: file)
            filesStatement = try Self.prepare(handle, "SELECT tier, filename, width FROM entryFile WHERE entryKey = ?1", file: file)
            decodeSizesStatement = columns["cacheSetting", default: []].isSuperset(of: ["name", "value"])
                ? try Self.prepare(handle, "SELECT value FROM cacheSetting WHERE name = 'decodeSizes'", file: file) : nil
            begin = try Self.prepare(handle, "BEGIN", file: file)
            commit = try Self.prepare(handle, "COMMIT", file: file)
        } catch {
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit {
        for statement in [profileStatement, ownerPrepared, entryStatement, filesStatement, usersPrepared, decodeSizesStatement, begin, commit] {
            sqlite3_finalize(statement)
        }
        sqlite3_close_v2(connection)
    }

    /// Runs `body` in one read transaction: the profile and its entry from one snapshot,
    /// while a warm-up commits beside it (WAL).
    func read<T>(_ body: () throws -> T) throws -> T {
        try step(begin)
        defer { sqlite3_reset(commit); _ = sqlite3_step(commit); sqlite3_reset(commit) }
        return try body()
    }

    func profile(id: String) throws -> Profile? {
        try profile(profileStatement, id)
    }

    /// The first user (by id) whose photo is `source`.
    func owner(ofSource source: String) throws -> Profile? {
        if ownerPrepared == nil {
            ownerPrepared = try Self.prepare(connection, "SELECT id, displayName, initials, glyph, color, photoSource FROM profile WHERE photoSource = ?1 ORDER BY id LIMIT 1", file: file)
        }
        return try profile(ownerPrepared!, source)
    }

    /// Up to `limit` user ids after `id` (nil: from the first), in the index's order.
    func userIDs(after id: String?, limit: Int) throws -> [String] {
        if usersPrepared == nil {
            usersPrepared = try Self.prepare(connection, "SELECT id FROM profile WHERE id > ?1 ORDER BY id LIMIT ?2", file: file)
        }
        let usersStatement = usersPrepared!
        defer { sqlite3_reset(usersStatement); sqlite3_clear_bindings(usersStatement) }
        // Every id sorts after the empty string but the empty one, which no profile has.
        _ = Self.bindText(usersStatement, 1, id ?? "")
        sqlite3_bind_int64(usersStatement, 2, Int64(limit))
        var ids: [String] = []
        while try row(usersStatement) {
            if let id = text(usersStatement, 0) { ids.append(id) }
        }
        return ids
    }

    /// The smallest decode size in points the cache's last warm was given (`--size`;
    /// `DecodeSizes`), else the defaults' smallest.
    func smallestDecodeSize() throws -> Int {
        guard let statement = decodeSizesStatement else { return DecodeSizes.defaultSmallest }
        defer { sqlite3_reset(statement) }
        guard try row(statement), let text = text(statement, 0), let smallest = DecodeSizes.parse(text)?.first else {
            return DecodeSizes.defaultSmallest
        }
        return smallest
    }

    func entry(key: String) throws -> Entry? {
        defer { sqlite3_reset(entryStatement); sqlite3_clear_bindings(entryStatement) }
        bind(entryStatement, key)
        guard try row(entryStatement) else { return nil }
        let kind = text(entryStatement, 0).flatMap(AvatarKind.init(rawValue:)) ?? .photo
        let placeholder = text(entryStatement, 2).map { Placeholder(thumbHash: text(entryStatement, 1), color: $0) }
        var entry = Entry(kind: kind, placeholder: placeholder, files: [:])
        defer { sqlite3_reset(filesStatement); sqlite3_clear_bindings(filesStatement) }
        bind(filesStatement, key)
        while try row(filesStatement) {
            guard let name = text(filesStatement, 1) else { continue }
            entry.files[Int(sqlite3_column_int64(filesStatement, 0))] = (name, Int(sqlite3_column_int64(filesStatement, 2)))
        }
        // An entry without files is not one a reader can use.
        return entry.files.isEmpty ? nil : entry
    }

    private func profile(_ statement: OpaquePointer, _ argument: String) throws -> Profile? {
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        bind(statement, argument)
        guard try row(statement) else { return nil }
        return Profile(id: text(statement, 0) ?? argument, displayName: text(statement, 1) ?? "", initials: text(statement, 2) ?? "",
                       glyph: text(statement, 3).flatMap(MonogramGlyph.init(rawValue:)), color: text(statement, 4) ?? "#8E8E93",
                       photoSource: text(statement, 5))
    }

    /// Binds `value` whole, NUL bytes included (an id "a\0b" is not "a").
    private func bind(_ statement: OpaquePointer, _ value: String) {
        _ = Self.bindText(statement, 1, value)
    }

    static func bindText(_ statement: OpaquePointer, _ index: Int32, _ value: String) -> Int32 {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty else { return sqlite3_bind_text(statement, index, "", 0, transient) }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL, let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: bytes)
    }

    /// Steps `statement`: true for a row, false when done.
    private func row(_ statement: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw LookupError.damagedIndex(file: file, reason: String(cString: sqlite3_errmsg(connection)))
        }
    }

    private func step(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw LookupError.damagedIndex(file: file, reason: String(cString: sqlite3_errmsg(connection)))
        }
    }

    /// Reads the schema: what a database that cannot be read at all fails on.
    private static func probe(_ handle: OpaquePointer) -> Int32 {
        sqlite3_exec(handle, "SELECT count(*) FROM sqlite_master", nil, nil, nil)
    }

    /// The columns of each of `tables`, read in one statement.
    private static func columns(of tables: [String], _ handle: OpaquePointer, file: URL) throws -> [String: Set<String>] {
        let sql = tables.map { "SELECT '\($0)', name FROM pragma_table_info('\($0)')" }.joined(separator: " UNION ALL ")
        let statement = try prepare(handle, sql, file: file)
        defer { sqlite3_finalize(statement) }
        var names: [String: Set<String>] = [:]
        while sqlite3_step(statement) == SQLITE_ROW {
            if let table = sqlite3_column_text(statement, 0), let name = sqlite3_column_text(statement, 1) {
                names[String(cString: table), default: []].insert(String(cString: name))
            }
        }
        return names
    }

    private static func prepare(_ handle: OpaquePointer, _ sql: String, file: URL) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw LookupError.damagedIndex(file: file, reason: String(cString: sqlite3_errmsg(handle)))
        }
        return statement
    }

    /// `file:` URI of `path` with `immutable=1`, its special characters escaped.
    static func immutableURI(_ path: String) -> String {
        var uri = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                uri += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return uri + "?immutable=1"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
