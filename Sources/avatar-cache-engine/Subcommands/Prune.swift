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

    @OptionGroup var wait: WaitOption

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        let directory = cacheOptions.directory
        do {
            let pruner = try prune.pruner()
            let outcome = try CacheStore.prune(directory, pruner: pruner, wait: try wait.seconds(), logger: logger)
            let plan = outcome.plan
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.cacheBytes)) of \(ByteSize.format(pruner.budgetBytes))")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
