import Foundation
import Synchronization

/// When a warm writes `metadata.json`, so that an app reading it finds what is committed
/// while a long run goes on, at a cost that stays small beside the run's:
///
///     no document at the start (a first warm), or a killed run before -> one at once
///       -> after the first commit of results, when there was none at the start
///       -> after a later commit, when a reader would find something new, at most every
///          `interval` seconds and no sooner than `costRatio` times the last write's
///          duration after it
///       -> at the end (`CacheSession.finish`), unless nothing a reader finds changed
///          since the document this run or the last one wrote at its end, and the file
///          is still that one (its stamp in the index): a re-run that changes nothing
///          writes nothing
///
/// Each write is the whole document from the index, renamed into place, so its cost grows
/// with the cache (a million users are about 160 MB); the ratio keeps the writes during a
/// run under 1 / (1 + `costRatio`) of its time however large it is. Those are not fsynced
/// (the disk's time for 160 MB is a second or more): a crash leaves the document before
/// or the new one (ext4 replaces by rename that way; a first warm's may be lost), and the
/// next run, finding the run killed, writes it at its start. The one at the end is made
/// durable as every cache file is. Every document names only files the index names,
/// which are on disk (a batch's files are flushed before its commit; the files a run
/// replaced are deleted after its last document).
package final class MetadataRefresh: Sendable {
    /// Seconds between two writes during a run, at least. Default 30.
    package static let interval: Double = 30
    /// A write waits at least this many times the last one's duration after it. Default 20.
    package static let costRatio: Double = 20

    private let directory: CacheDirectory
    private let store: RunStore
    /// What the policy has seen, behind a lock (commits and reads note changes).
    private struct Seen {
        /// The next commit writes the document (there was none at the start).
        var firstCommitDue: Bool
        /// Something a reader finds (an entry, a profile) changed since the last document.
        var changed = false
        /// … or since the last durable one (a document written during the run is not).
        var changedSinceDurable = false
        var lastEnded: Date
        var lastSeconds: Double = 0
        /// Documents written during the run (tests).
        var writes = 0
    }
    private let seen: Mutex<Seen>

    /// Documents written during the run (tests).
    package var writes: Int { seen.withLock { $0.writes } }

    /// `started`: the run's start (a document found there counts as written then).
    package init(directory: CacheDirectory, store: RunStore, started: Date) {
        self.directory = directory
        self.store = store
        seen = Mutex(Seen(firstCommitDue: directory.fileSize(CacheDirectory.metadataName) == nil, lastEnded: started))
    }

    /// Before the run reads anything: the document written at once, durably, when there
    /// is none (a first warm: it exists from here on) or the last run was killed (it may
    /// have committed entries whose old files the document still names: the document
    /// follows the index before any sweep).
    package func begin(previousRunInterrupted: Bool) throws {
        guard seen.withLock({ $0.firstCommitDue }) || previousRunInterrupted else { return }
        try write(at: Date(), durable: true)
    }

    /// Something a reader of the document would find changed (profiles read, entries
    /// saved).
    package func noteChange() {
        seen.withLock {
            $0.changed = true
            $0.changedSinceDurable = true
        }
    }

    /// After a commit of results (`savedEntries`: it saved an entry): the document
    /// written again when that is due.
    package func committed(savedEntries: Bool, at now: Date = Date()) throws {
        if savedEntries { noteChange() }
        let due = seen.withLock {
            $0.changed && ($0.firstCommitDue || now.timeIntervalSince($0.lastEnded) >= max(Self.interval, Self.costRatio * $0.lastSeconds))
        }
        guard due else { return }
        try write(at: now, durable: false)
        seen.withLock { $0.firstCommitDue = false }
    }

    /// Whether the run's end must write the document: something changed since the last
    /// durable one, or the file is not the one a warm last wrote durably (none, damaged,
    /// written by another command or version, or by a killed run).
    package var finalWriteNeeded: Bool {
        get throws {
            if seen.withLock({ $0.changedSinceDurable }) { return true }
            guard let stamp = stamp() else { return true }
            return try store.metadataStamp() != stamp
        }
    }

    /// After the run's end wrote the document (durably): its stamp kept in the index.
    package func finished(written: Bool) throws {
        guard written else { return }
        try store.setMetadataStamp(stamp())
    }

    /// Writes the document; the clock of the policy is `now`'s, plus the write's duration.
    private func write(at now: Date, durable: Bool) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        try store.writeMetadata(to: directory, durable: durable)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        seen.withLock {
            $0.lastEnded = now.addingTimeInterval(seconds)
            $0.lastSeconds = seconds
            $0.changed = false
            if durable { $0.changedSinceDurable = false }
            $0.writes += 1
        }
        if durable { try store.setMetadataStamp(stamp()) }
    }

    /// The document's device, inode, size and modification time (nanoseconds), or nil
    /// when there is none.
    private func stamp() -> String? {
        var info = stat()
        guard lstat(directory.metadataURL.path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
}
