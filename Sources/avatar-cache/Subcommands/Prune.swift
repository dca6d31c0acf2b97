import ArgumentParser
import AvatarCache
import Foundation

struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evict least-recently-used entries until the cache is at or under 80 % of the budget.",
        discussion: "Sizes take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB as powers of 1,024."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Option(help: ArgumentHelp("Cache budget.", valueName: "size"))
    var budget = ByteCount(bytes: 100_000_000)

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        let directory = CacheDirectory(root: cacheOptions.cacheURL)
        do {
            guard FileManager.default.fileExists(atPath: directory.root.path) else {
                throw StoreError.io(path: directory.root.path, reason: "no such cache directory")
            }
            let lock = try CacheLock.acquire(in: directory)
            defer { lock.release() }
            let metadata = try directory.loadMetadata()
            let (plan, cacheBytes) = try CacheMaintenance(directory: directory, logger: logger)
                .pruneAndSave(metadata, pruner: Pruner(budgetBytes: budget.bytes))
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(cacheBytes)) of \(ByteSize.format(budget.bytes))")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
