internal import GRDB
internal import GRDBSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A prepared statement bound and stepped through SQLite's C API, for the paths taken once
/// per profile (`RunTables`: the record writer's statements and the monogram plan's walk
/// of the run's profiles; `MetadataUsers`: metadata.json's users; a million of each at a
/// million profiles), where GRDB's boxing of every argument and value read doubled the
/// re-run (docs/performance-notes.md, "RawStatement"). Nowhere else: every other query of
/// the store is GRDB's (records, cached statements).
/// Use only inside a GRDB read or write, on its `Database`; nothing else is bypassed.
struct RawStatement {
    private let statement: Statement
    private var handle: OpaquePointer { statement.sqliteStatement }
    private let db: Database

    init(_ db: Database, sql: String) throws {
        self.db = db
        statement = try db.makeStatement(sql: sql)
    }

    /// SQLite copies the bytes (SQLITE_TRANSIENT).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(handle, index)
            return
        }
        text.withUTF8 { bytes in
            if let base = bytes.baseAddress {
                _ = sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count), Self.transient)
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, sqlite3_int64(value)) }

    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }

    func bind(_ index: Int32, _ bytes: [UInt8]?) {
        guard let bytes else {
            sqlite3_bind_null(handle, index)
            return
        }
        bytes.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// One step: SQLITE_ROW or SQLITE_DONE, else SQLite's error.
    private func step() throws -> Int32 {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
        return code
    }

    /// Runs the statement once; returns the rows it changed.
    @discardableResult
    func execute() throws -> Int {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        _ = try step()
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    /// The current row of a stepped statement.
    struct Columns {
        let handle: OpaquePointer

        func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

        /// The column's text as bytes, valid until the next step.
        func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
            guard let text = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
        }

        /// Whether the column holds `text` (`IS` in SQL: both NULL, or the same bytes).
        func holds(_ column: Int32, _ text: String?) -> Bool {
            guard var text else { return isNull(column) }
            guard !isNull(column) else { return false }
            let stored = bytes(column)
            return text.withUTF8 { $0.count == stored.count && ($0.isEmpty || memcmp($0.baseAddress!, stored.baseAddress!, $0.count) == 0) }
        }

        func text(_ column: Int32) -> String? {
            guard let text = sqlite3_column_text(handle, column) else { return nil }
            let count = Int(sqlite3_column_bytes(handle, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    }

    /// Whether a walk through the rows goes on after one.
    enum Walk { case next, stop }

    /// Steps through the rows until `body` says `.stop` or none is left.
    func forEachRow(_ body: (Columns) throws -> Walk) throws {
        defer { sqlite3_reset(handle) }
        while try step() == SQLITE_ROW {
            if try body(Columns(handle: handle)) == .stop { return }
        }
    }

    /// `body` of the first row, nil when there is none.
    func firstRow<T>(_ body: (Columns) throws -> T) throws -> T? {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        return try step() == SQLITE_ROW ? try body(Columns(handle: handle)) : nil
    }

    /// The first column of the first row, as an integer (0 when there is none).
    func singleInt() throws -> Int {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        return try step() == SQLITE_ROW ? Int(sqlite3_column_int64(handle, 0)) : 0
    }
}
