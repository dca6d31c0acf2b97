import AvatarCacheModel
import CSQLite
import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a process's accesses went when it was done with the cache (`AccessRecorder.finish`).
package enum AccessesKept: Equatable, Sendable {
    /// There were none (nothing answered with an entry, or all were written before).
    case none
    /// Appended to the cache's access journal at this path, for the next writer to fold in.
    case journal(String)
    /// Written into the index at this path.
    case index(String)
    /// Neither could be written here (a read-only cache): the prune sees older times.
    case notKept
}

/// Records lookups as accesses for the prune, off the caller's path: a lookup adds its
/// entry's key to a pending set (a lock and a dictionary insert); a serial queue writes
/// the set in one transaction at most every `interval` seconds, or at once when
/// `batchLimit` keys wait, on a connection of its own. A warm-up's transaction then
/// delays the queue, never an answer. At most `pendingLimit` keys wait; beyond that an
/// access is not recorded (the prune then sees an older access time for it, nothing
/// worse). A cache this process cannot write records nothing.
///
/// The index's write-ahead log stays bounded: SQLite folds it back (a checkpoint) as it
/// passes 1,000 pages while this process keeps the index open, and `finish()` leaves it
/// empty when the process is done. A log left behind would be read whole by the next
/// process that opens the index (SQLite rebuilds its map of the log when no process has
/// it open), and appended to: 23 KB and more time for every lookup process after it.
/// A process that ends without having written (a `lookup` process) writes no log at all:
/// `finish()` appends its accesses to the cache's `AccessJournal` (which every write here
/// folds in first), and folds the journal in once it has grown.
// Why @unchecked: the writing connection is SQLite's (a C handle), used on `queue` only.
final class AccessRecorder: @unchecked Sendable {
    static let interval = 1.0
    static let batchLimit = 4_096
    static let pendingLimit = 100_000

    private let file: URL
    /// The cache directory's path (for its `AccessJournal`).
    private let directory: String
    private let queue = DispatchQueue(label: "avatar-cache lookup accesses")
    /// The accesses waiting for their write.
    private struct Pending {
        var keys: [String: Double] = [:]
        var scheduled = false
        /// A write is queued to run at once (one at a time: not another per lookup while
        /// a warm-up holds the index).
        var writeQueued = false
    }
    private let state = Mutex(Pending())
    /// Used on `queue` only.
    private var connection: OpaquePointer?
    private var unwritable = false

    init(file: URL) {
        self.file = file
        directory = file.deletingLastPathComponent().path
    }

    deinit {
        if let connection { sqlite3_close_v2(connection) }
    }

    /// Notes an access to `key` now; returns at once.
    func record(_ key: String) {
        let now = Date().timeIntervalSince1970
        var writeNow = false
        var schedule = false
        state.withLock { state in
            if state.keys.count < Self.pendingLimit || state.keys[key] != nil { state.keys[key] = now }
            if state.keys.count >= Self.batchLimit {
                if !state.writeQueued {
                    state.writeQueued = true
                    writeNow = true
                }
            } else if !state.scheduled {
                state.scheduled = true
                schedule = true
            }
        }
        if writeNow {
            queue.async { self.write() }
        } else if schedule {
            queue.asyncAfter(deadline: .now() + Self.interval) { self.write() }
        }
    }

    /// Writes what waits and returns when it is in the index (or when the index stayed
    /// locked past the busy timeout: the accesses then wait for the next write).
    func flush() {
        queue.sync { self.write() }
    }

    /// What a process done with the cache calls. One that has not written into the index
    /// (a `lookup` process) appends what waits to the cache's `AccessJournal` (one
    /// `write(2)`: no transaction, no log, no `fsync`), and folds the journal into the
    /// index only once it has passed `AccessJournal.foldSize`. One that has (a server's
    /// reader, releasing its lookup) writes what waits into the index. Either waits for no
    /// warm-up (one holding the index's write lock leaves the accesses in the journal for
    /// the next writer), then leaves the index's log as this process found it: folded into
    /// the index and emptied (a TRUNCATE checkpoint, which waits for nobody either: while
    /// another process writes or reads an older snapshot, it folds what it can and leaves
    /// the rest to them); and closes the writing connection. Returns where the accesses
    /// went.
    @discardableResult
    func finish() -> AccessesKept {
        queue.sync {
            var batch = self.takePending()
            guard !batch.isEmpty else { return .none }
            let journal = AccessJournal.path(inCacheAt: directory)
            var journaled = false
            if self.connection == nil, let size = AccessJournal.appended(batch, toCacheAt: self.directory) {
                if size < AccessJournal.foldSize { return .journal(journal) }
                batch = [:]
                journaled = true
            }
            guard let connection = self.open() else { return journaled ? .journal(journal) : .notKept }
            defer {
                sqlite3_close_v2(connection)
                self.connection = nil
            }
            sqlite3_busy_timeout(connection, 0)
            if self.commit(batch, on: connection) {
                _ = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
                return .index(file.path)
            }
            if journaled { return .journal(journal) }
            return AccessJournal.append(batch, toCacheAt: self.directory) ? .journal(journal) : .notKept
        }
    }

    /// Writes what waits, then calls `done` (on the recorder's queue).
    func flush(then done: @escaping @Sendable () -> Void) {
        queue.async {
            self.write()
            done()
        }
    }

    /// The accesses waiting, taken for a write.
    private func takePending() -> [String: Double] {
        // The next batch's table made here, at its full size, so that a lookup never
        // pays for growing it (a rehash of thousands of keys under the lock).
        var fresh: [String: Double] = [:]
        fresh.reserveCapacity(Self.batchLimit)
        return state.withLock { state in
            swap(&state.keys, &fresh)
            state.scheduled = false
            state.writeQueued = false
            return fresh
        }
    }

    /// On `queue`: one transaction of every pending access, waiting for the index up to
    /// the busy timeout; what could not be written waits for the next write.
    private func write() {
        let batch = takePending()
        guard !batch.isEmpty, let connection = open() else { return }
        if !commit(batch, on: connection) { putBack(batch) }
    }

    /// On `queue`: `batch` and the accesses of the cache's journal (if any) in one
    /// transaction. False when the index stayed locked past the busy timeout or the commit
    /// failed (a full disk): nothing was written, and a journal taken is put back.
    private func commit(_ batch: [String: Double], on connection: OpaquePointer) -> Bool {
        guard sqlite3_exec(connection, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { return false }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "UPDATE entry SET lastAccess = ?1 WHERE key = ?2 AND lastAccess < ?1", -1, &statement, nil) == SQLITE_OK,
              let statement else {
            sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
            return false
        }
        defer { sqlite3_finalize(statement) }
        let journal = AccessJournal.take(fromCacheAt: directory)
        for accesses in [journal?.accesses ?? [:], batch] {
            for (key, time) in accesses {
                sqlite3_bind_double(statement, 1, time)
                _ = IndexReader.bindText(statement, 2, key)
                _ = sqlite3_step(statement)
                sqlite3_reset(statement)
            }
        }
        guard sqlite3_exec(connection, "COMMIT", nil, nil, nil) == SQLITE_OK else {
            sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
            if let journal {
                AccessJournal.append(journal.accesses, toCacheAt: directory)
                journal.remove()
            }
            return false
        }
        journal?.remove()
        return true
    }

    /// Accesses not written go back to wait (within `pendingLimit`), scheduled again.
    private func putBack(_ batch: [String: Double]) {
        let schedule = state.withLock { state in
            for (key, time) in batch where state.keys.count < Self.pendingLimit && state.keys[key] == nil {
                state.keys[key] = time
            }
            guard !state.keys.isEmpty && !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { queue.asyncAfter(deadline: .now() + Self.interval) { self.write() } }
    }

    /// The writing connection, opened on first use; nil when the index cannot be written
    /// here (a read-only mount, another user's cache).
    private func open() -> OpaquePointer? {
        if let connection { return connection }
        if unwritable { return nil }
        var opened: OpaquePointer?
        guard access(file.path, W_OK) == 0,
              sqlite3_open_v2(file.path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let opened else {
            if let opened { sqlite3_close_v2(opened) }
            unwritable = true
            return nil
        }
        // A warm-up's transaction is waited for (up to 10 s), here, not by a caller.
        sqlite3_busy_timeout(opened, 10_000)
        sqlite3_exec(opened, "PRAGMA synchronous = NORMAL", nil, nil, nil)
        connection = opened
        return opened
    }
}
