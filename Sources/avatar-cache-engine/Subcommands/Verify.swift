import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a cache: every entry's files exist with the recorded size and SHA-256, no unreferenced or temporary file, within budget.",
        discussion: "Exit 0 when clean, 4 when problems were found (listed on stdout). With --repair, broken entries are dropped and orphans and leftovers removed (good entries are not touched), and the exit code says whether any problem is left. A first run killed before it made its index is a note, not a problem."
    )

    @OptionGroup var cache: CacheDirectoryOption

    @OptionGroup var budget: BudgetOption

    @Flag(help: "Fix what can be fixed, then report what was found.")
    var repair = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    @OptionGroup var wait: WaitOption

    func run() async throws {
        let directory = cache.directory
        let result: CacheVerifier.Result
        do {
            switch try CacheStore.verify(directory, budgetBytes: try budget.given(), repair: repair,
                                         wait: try wait.seconds(), logger: Logging.make(format: .text, level: .warning, progress: nil)) {
            case .interruptedFirstRun(let note):
                print("note: \(note)")
                print("0 entries: ok")
                return
            case .checked(let checked):
                result = checked
            }
        } catch {
            throw ExitCodes.fail(error)
        }
        if json {
            try printJSON(result)
        } else {
            for problem in result.problems { print(problem) }
            for action in result.repaired { print("repaired: \(action)") }
            for notice in result.notices { print("note: \(notice)") }
            print("\(result.entries) entries, \(result.files) files, \(ByteSize.format(result.cacheBytes)) of \(ByteSize.format(result.budgetBytes))\(result.budgetOrigin.inWords): "
                + (result.problems.isEmpty ? "ok" : "\(result.problems.count) problem\(result.problems.count == 1 ? "" : "s")"
                   + (result.repaired.isEmpty ? "" : result.unrepaired.isEmpty ? " (all repaired)" : " (\(result.unrepaired.count) left after the repair)")))
        }
        if !result.failing.isEmpty { throw ExitCodes.integrityFailure }
    }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a cache's entries, bytes by size tier, oldest access and budget use."
    )

    @OptionGroup var cache: CacheDirectoryOption

    @OptionGroup var budget: BudgetOption

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let stats: CacheStatistics
        do {
            stats = try CacheStore.statistics(cache.directory, budgetBytes: try budget.given())
        } catch {
            throw ExitCodes.fail(error)
        }
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
