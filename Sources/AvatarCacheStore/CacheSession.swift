import AvatarCacheModel
import Foundation
import Logging

/// The maintenance sequence, written once and used by `warm`, `prune` and `verify`:
///
///     lock -> open the index (importing an older cache) -> … the caller's work …
///       -> prune (one transaction) -> write metadata.json from the index
///       -> delete the files nothing references any more -> unlock
///
/// Files are deleted last: a kill at any instant leaves an index and a metadata.json that
/// name only files on disk (at worst a few orphans, which the next run sweeps).
package final class CacheSession {
    package let directory: CacheDirectory
    let index: CacheIndex
    let logger: Logger
    private let lock: CacheLock
    /// The last run that wrote this cache was killed before it finished.
    package let previousRunInterrupted: Bool
    /// Files made unreferenced by the caller's work (a source's photo replaced), deleted
    /// by `finish` once metadata.json no longer names them.
    package var pendingDeletes = Set<String>()
    /// What a warm asks of the index.
    package var store: RunStore { RunStore(index: index) }

    private init(directory: CacheDirectory, index: CacheIndex, lock: CacheLock, logger: Logger, previousRunInterrupted: Bool) {
        self.directory = directory
        self.previousRunInterrupted = previousRunInterrupted
        self.index = index
        self.lock = lock
        self.logger = logger
    }

    /// Takes the lock (waiting up to `wait` seconds) and opens the index; with `create`, a
    /// new cache is made when there is none. With `markRun`, `.run-in-progress` is
    /// written before anything else (so a kill at any later instant is recognised as an
    /// interrupted run); the caller removes it when done.
    static func open(_ directory: CacheDirectory, wait: TimeInterval, create: Bool, markRun: Bool = false,
                            logger: Logger) throws -> CacheSession {
        if create { try directory.create() } else {
            guard FileManager.default.fileExists(atPath: directory.root.path) else {
                throw StoreError.io(path: directory.root.path, reason: "no such cache directory")
            }
        }
        let lock = try CacheLock.acquire(in: directory, wait: wait)
        let interruptedBefore = directory.hasInterruptedRun
        do {
            let interrupted = interruptedBefore
            if markRun { try directory.markRunStarted() }
            let index = try CacheIndex.open(directory, create: create)
            return CacheSession(directory: directory, index: index, lock: lock, logger: logger, previousRunInterrupted: interrupted)
        } catch {
            // Nothing was written: the marker goes (unless an earlier run left it).
            if markRun && !interruptedBefore { try? directory.markRunFinished() }
            lock.release()
            throw error
        }
    }

    /// Folds in the accesses lookups journaled (`AccessJournal`), prunes to the cache's
    /// budget (`pruner`'s values where given, else the cache's own, else the defaults:
    /// `Pruner.kept`; with `recordsBudget`, the values given become the cache's own, in the
    /// same transaction), rewrites metadata.json when entries changed
    /// (`entriesChanged`, an eviction, or no document yet), then deletes what nothing
    /// references: evicted and replaced files, and `orphans` (cache files found
    /// unreferenced) still unreferenced.
    package func finish(pruner: Pruner, recordsBudget: Bool = true, entriesChanged: Bool, orphans: Set<String> = []) throws -> PruneOutcome {
        // The accesses lookups journaled while the index was busy count for this prune.
        let journal = AccessJournal.take(fromCacheAt: directory.root.path)
        let (pruner, plan) = try index.write { db in
            for (key, time) in journal?.accesses ?? [:] { try EntryRecords.touch(db, key: key, at: Date(indexValue: time)) }
            let kept = try pruner.kept(db, recording: recordsBudget)
            return (kept, try kept.prune(db))
        }
        journal?.remove()
        let documentWritten = entriesChanged || !plan.evicted.isEmpty || directory.fileSize(CacheDirectory.metadataName) == nil
        if documentWritten {
            try index.read { try MetadataDocument.write(from: $0, to: directory) }
        }
        let candidates = pendingDeletes.union(plan.filesToDelete).union(orphans)
        let deletable = try index.read { db in try candidates.filter { try !EntryRecords.isReferenced(db, filename: $0) } }
        for name in deletable.sorted() { try directory.remove(name) }
        pendingDeletes.removeAll()
        if !deletable.isEmpty { directory.syncDirectory() }
        if !plan.evicted.isEmpty {
            logger.info("pruned", metadata: [
                "evicted": .stringConvertible(plan.evicted.count),
                "bytesBefore": .stringConvertible(plan.bytesBefore), "bytesAfter": .stringConvertible(plan.bytesAfter),
            ])
        }
        return PruneOutcome(plan: plan, pruner: pruner, cacheBytes: plan.bytesAfter, deletedFiles: deletable.count, documentWritten: documentWritten)
    }

    /// Releases the lock (the index stays readable by others).
    package func close() {
        index.checkpoint()
        index.close()
        lock.release()
    }
}

/// What a prune did: the plan carried out, the bytes left, the files deleted.
public struct PruneOutcome: Sendable {
    public var plan: Pruner.Plan
    /// The budget and trim ratio pruned to, and where each came from.
    public var pruner: Pruner
    /// Bytes of the cache's files after the prune.
    public var cacheBytes: Int64
    /// Files deleted from disk.
    public var deletedFiles: Int
    /// metadata.json was written.
    public var documentWritten = false
}
