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

    @Option(help: ArgumentHelp("Wait up to this long for a run that holds the cache's lock.", valueName: "seconds"))
    var wait: Double = 0

    func run() async throws {
        let logger = cacheOptions.makeLogger()
        let directory = CacheDirectory(root: cacheOptions.cacheURL)
        do {
            try Pruner.checkTrimRatio(prune.trimRatio)
            let session = try CacheSession.open(directory, wait: wait, create: false, logger: logger)
            defer { session.close() }
            let outcome = try session.finish(pruner: prune.pruner, entriesChanged: false)
            let plan = outcome.plan
            print("evicted \(plan.evicted.count) entries (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.cacheBytes)) of \(ByteSize.format(prune.budget.bytes))")
        } catch {
            throw ExitCodes.fail(error)
        }
    }
}
