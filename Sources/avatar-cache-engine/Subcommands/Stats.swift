import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a cache's entries, bytes by size tier, oldest access and budget use."
    )

    @OptionGroup var cache: CacheOption<String>

    @OptionGroup var budget: BudgetOption

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var log: LogLevelOption

    func run() async throws {
        let logger = log.makeLogger()
        let stats: CacheStatistics
        let start = ContinuousClock.now
        do {
            stats = try CacheStore.statistics(cache.directory, budgetBytes: try budget.given())
        } catch {
            throw ExitCodes.fail(error)
        }
        logger.debug("read the index without the lock", metadata: [
            "cache": "\(cache.directory.root.path)", "entries": "\(stats.entries)",
            "seconds": "\(String(format: "%.3f", (ContinuousClock.now - start) / .seconds(1)))",
        ])
        if json {
            try printJSON(stats)
            return
        }
        print("entries:        \(stats.entries) (\(stats.photoEntries) photos, \(stats.monogramEntries) monograms), \(stats.profiles) profiles")
        print("files:          \(stats.files), \(ByteSize.format(stats.cacheBytes))")
        for (tier, bytes) in stats.bytesByTier.sorted(by: { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }) {
            print("  tier \(tier) px: \(ByteSize.format(bytes))")
        }
        print(String(format: "budget use:     %.1f %% of %@", stats.budgetUse * 100, ByteSize.format(stats.budgetBytes) + stats.budgetOrigin.inWords))
        let formatter = ISO8601DateFormatter()
        print("oldest access:  \(stats.oldestAccess.map { formatter.string(from: $0) } ?? "-")")
        print("newest access:  \(stats.newestAccess.map { formatter.string(from: $0) } ?? "-")")
        print("failing sources waiting to be retried: \(stats.failingSources)")
    }
}
