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
        // Unreferenced files are about to be deleted: they do not count toward the budget.
        let files = try directory.listFiles().filter {
            !$0.name.hasPrefix(CacheDirectory.temporaryPrefix) && $0.name != CacheDirectory.runMarkerName
                && (!CacheDirectory.isCacheFileName($0.name) || referenced.contains($0.name))
        }
        var plan = pruner.plan(metadata, files: files)
        metadata = plan.metadata
        // Users whose photo was evicted now show their monogram, or nothing.
        metadata.refreshProfiles()
        metadata.updatedAt = Date()
        try directory.saveMetadata(metadata)
        try directory.sweep(keeping: metadata.referencedFiles)
        directory.syncDirectory()
        plan.metadata = metadata
        // The saved metadata's own size changed: measure what is really on disk.
        let cacheBytes = try directory.listFiles().filter { $0.name != CacheDirectory.runMarkerName }.reduce(0) { $0 + $1.size }
        if !plan.evicted.isEmpty {
            logger.info("pruned", metadata: [
                "evicted": "\(plan.evicted.count)",
                "bytesBefore": "\(plan.bytesBefore)", "bytesAfter": "\(cacheBytes)",
            ])
        }
        return (plan, cacheBytes)
    }
}
