import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evict least-recently-used entries until the cache is at or under 80 % of the budget.",
        discussion: "Without --budget (--trim-ratio), the cache's own: the one the last warm, run, merge or prune given one recorded in it (100MB and 0.8 for a cache never given one); one given becomes the cache's own. Sizes take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB as powers of 1,024."
    )

    @OptionGroup var cache: CacheOption<String>

    @OptionGroup var prune: PruneOptions

    @OptionGroup var wait: WaitOption

    @OptionGroup var log: LogLevelOption

    func run() async throws {
        let logger = log.makeLogger()
        let directory = cache.directory
        do {
            let outcome = try CacheStore.prune(directory, pruner: try prune.pruner(), wait: try wait.seconds(), logger: logger)
            let plan = outcome.plan
            let budget = outcome.pruner
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.cacheBytes)) of \(ByteSize.format(budget.budgetBytes))\(budget.budgetOrigin.inWords)")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
