import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a cache: every entry's files exist with the recorded size and SHA-256, no unreferenced or temporary file, within budget.",
        discussion: "Exit 0 when clean, 4 when problems were found (listed on stdout). With --repair, broken entries are dropped and orphans and leftovers removed (good entries are not touched), and the exit code says whether any problem is left. A first run killed before it made its index is a note, not a problem."
    )

    @OptionGroup var cache: CacheOption<String>

    @OptionGroup var budget: BudgetOption

    @Flag(help: "Fix what can be fixed, then report what was found.")
    var repair = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    @OptionGroup var wait: WaitOption

    @OptionGroup var log: LogLevelOption

    func run() async throws {
        let directory = cache.directory
        let result: CacheVerifier.Result
        do {
            switch try CacheStore.verify(directory, budgetBytes: try budget.given(), repair: repair,
                                         wait: try wait.seconds(), logger: log.makeLogger(else: .warning)) {
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
