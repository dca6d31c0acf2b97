import AvatarCacheLookup
import Foundation

/// When a run writes `metadata.json` before its end, so that an app reading it finds what
/// is committed while a long run goes on:
///
///     no document at the start (a first warm) -> one at once (what the index holds)
///       -> again after the first commit of results
///       -> again after a later commit, at most every `interval` seconds and no sooner than
///          `costRatio` times the last write's duration after it ended
///       -> at the end (`CacheSession.finish`), as every run
///
/// Each write is the whole document from the index, atomically (temporary file, fsync,
/// rename), so its cost grows with the cache; the ratio keeps the writes under
/// 1 / (1 + `costRatio`) of a run's time however large it is, and a run shorter than
/// `interval` after its first commit writes nothing more until its end. The document
/// names only files the index names, which are on disk (a batch's files are flushed
/// before its commit; replaced files are deleted after the final write).
package final class MetadataRefresh: @unchecked Sendable {
    /// Seconds between two writes during a run, at least. Default 30.
    package static let interval: Double = 30
    /// A write waits at least this many times the last one's duration after it. Default 20.
    package static let costRatio: Double = 20

    private let directory: CacheDirectory
    private let store: RunStore
    private let lock = NSLock()
    /// The next commit writes the document whenever it comes (a first warm's first).
    private var firstCommitDue: Bool
    private var lastEnded: Date
    private var lastSeconds: Double = 0
    /// Documents written during the run (tests, the debug log).
    package private(set) var writes = 0

    /// `started`: the run's start (a document found there counts as written then).
    package init(directory: CacheDirectory, store: RunStore, started: Date) {
        self.directory = directory
        self.store = store
        lastEnded = started
        firstCommitDue = directory.fileSize(CacheDirectory.metadataName) == nil
    }

    /// Before the run reads anything: a first warm's document, at once.
    package func begin() throws {
        guard firstCommitDue else { return }
        try write(at: Date())
    }

    /// After a commit of results: the document written again when it is due.
    package func committed(at now: Date = Date()) throws {
        let due = lock.withLock {
            firstCommitDue || now.timeIntervalSince(lastEnded) >= max(Self.interval, Self.costRatio * lastSeconds)
        }
        guard due else { return }
        try write(at: now)
        lock.withLock { firstCommitDue = false }
    }

    /// Writes the document; the clock of the policy is `now`'s, plus the write's duration.
    private func write(at now: Date) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        try store.writeMetadata(to: directory)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        lock.withLock {
            lastEnded = now.addingTimeInterval(seconds)
            lastSeconds = seconds
            writes += 1
        }
    }
}
