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
    ///
    /// With `saveUnchanged` false (a `prune` that found nothing to do), metadata.json is
    /// left as it is when nothing in it changed: at 100,000 profiles rewriting it is most
    /// of a prune's time.
    /// `knownSizes` passes on sizes the caller knows (see `CacheDirectory.listFiles`).
    public func pruneAndSave(_ metadata: CacheMetadata, pruner: Pruner, saveUnchanged: Bool = true,
                             knownSizes: [String: Int64] = [:]) throws -> (plan: Pruner.Plan, cacheBytes: Int64) {
        let original = metadata
        var metadata = metadata
        let referenced = metadata.referencedFiles
        let listing = try directory.listFiles(knownSizes: knownSizes)
        // Unreferenced files are about to be deleted: they do not count toward the budget.
        let files = listing.filter {
            !$0.name.hasPrefix(CacheDirectory.temporaryPrefix) && !CacheDirectory.isBookkeeping($0.name)
                && (!CacheDirectory.isCacheFileName($0.name) || referenced.contains($0.name))
        }
        var plan = pruner.plan(metadata, files: files)
        metadata = plan.metadata
        // Users whose photo was evicted now show their monogram, or nothing.
        metadata.refreshProfiles()
        if saveUnchanged || !plan.evicted.isEmpty || metadata != original {
            metadata.updatedAt = Date()
            try directory.saveMetadata(metadata)
        }
        // Eviction is the only change to the entries here: without it, the same files.
        let removed = Set(try directory.sweep(keeping: plan.evicted.isEmpty ? referenced : metadata.referencedFiles, in: listing))
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
