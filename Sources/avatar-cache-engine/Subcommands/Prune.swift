import ArgumentParser
import AvatarCache
import Foundation

struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evict least-recently-used entries until the cache is at or under 80 % of the budget.",
        discussion: "Sizes take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB as powers of 1,024."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @OptionGroup var prune: PruneOptions

    @Option(help: Settings.wait.argumentHelp(summary: "Wait up to this long for a run that holds the cache's lock."))
    var wait: String?

    func validate() throws { _ = try Settings.wait.value(of: wait) }

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        let directory = CacheDirectory(root: cacheOptions.cacheURL)
        do {
            let pruner = try prune.pruner()
            let outcome = try CacheStore.prune(directory, pruner: pruner, wait: try Settings.wait.value(of: wait), logger: logger)
            let plan = outcome.plan
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.cacheBytes)) of \(ByteSize.format(pruner.budgetBytes))")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
