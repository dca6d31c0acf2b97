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
    var budget = ByteCount(bytes: Pruner.defaultBudgetBytes)

    @Option(help: ArgumentHelp("Fraction of the budget to trim down to.", valueName: "ratio"))
    var trimRatio = Pruner.defaultTrimRatio

    @Option(help: ArgumentHelp("Wait up to this long for another run's lock.", valueName: "seconds"))
    var wait: Double = 0

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        let directory = CacheDirectory(root: cacheOptions.cacheURL)
        do {
            try Pruner.checkTrimRatio(trimRatio)
            let session = try CacheSession.open(directory, wait: wait, create: false, logger: logger)
            defer { session.close() }
            let outcome = try session.finish(pruner: Pruner(budgetBytes: budget.bytes, trimRatio: trimRatio), entriesChanged: false)
            let plan = outcome.plan
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.cacheBytes)) of \(ByteSize.format(budget.bytes))")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
