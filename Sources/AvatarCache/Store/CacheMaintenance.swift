import Foundation
import Logging

/// Prune and save, shared by `warm` (at the end of every run) and `prune`.
public struct CacheMaintenance: Sendable {
    public let directory: CacheDirectory
    let logger: Logger

    public init(directory: CacheDirectory, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Evicts to budget, saves the metadata atomically, then deletes every cache file no
    /// entry references any more (evicted, replaced, or left by an interrupted run).
    /// Deleting after saving means a kill in between leaves orphans, never a metadata
    /// entry whose file is gone.
    public func pruneAndSave(_ metadata: CacheMetadata, pruner: Pruner) throws -> (plan: Pruner.Plan, cacheBytes: Int64) {
        var metadata = metadata
        let referenced = metadata.referencedFiles
        let listing = try directory.listFiles()
        // Unreferenced files are about to be deleted: they do not count toward the budget.
        let files = listing.filter {
            !$0.name.hasPrefix(CacheDirectory.temporaryPrefix) && !CacheDirectory.isBookkeeping($0.name)
                && (!CacheDirectory.isCacheFileName($0.name) || referenced.contains($0.name))
        }
        var plan = pruner.plan(metadata, files: files)
        metadata = plan.metadata
        // Users whose photo was evicted now show their monogram, or nothing.
        metadata.refreshProfiles()
        metadata.updatedAt = Date()
        try directory.saveMetadata(metadata)
        let removed = Set(try directory.sweep(keeping: metadata.referencedFiles, in: listing))
        directory.syncDirectory()
        plan.metadata = metadata
        // What stays on disk and counts toward the budget.
        let kept = listing.filter { !removed.contains($0.name) && !CacheDirectory.isBookkeeping($0.name) }
        let cacheBytes = kept.reduce(0) { $0 + $1.size }
        if !plan.evicted.isEmpty {
            logger.info("pruned", metadata: [
                "evicted": "\(plan.evicted.count)",
                "bytesBefore": "\(plan.bytesBefore)", "bytesAfter": "\(cacheBytes)",
            ])
        }
        return (plan, cacheBytes)
    }
}
