import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

struct Merge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge caches (the shards of a split run) into one: the union of their indexes, files hard-linked where possible, one prune.",
        discussion: """
            Entries: the newest access wins; the same content is one file (names are content \
            hashes). Profiles: the newest update wins. Files are hard-linked when the caches share \
            a filesystem, else copied. Each cache merged is remembered by its shard (i/n, from \
            warm --shard) or its id: merging a re-run shard again replaces what it brought before, \
            and a merge that brings every shard of a split (0/n … n-1/n) replaces what the shards \
            of an earlier, different split brought. The merged caches are only read (under their \
            locks); --wait is how long each merged cache's lock, and the target's, is waited for \
            when another run holds it. Sizes take KB, MB, GB as powers of 1,000 and KiB, MiB, GiB as powers of 1,024.
            """
    )

    @Argument(help: ArgumentHelp("The caches to merge.", valueName: "cache"))
    var caches: [String]

    @Option(help: ArgumentHelp("The cache to merge into (created when missing).", valueName: "dir"))
    var into: String

    @OptionGroup var prune: PruneOptions

    @OptionGroup var wait: WaitOption

    @OptionGroup var log: LogLevelOption

    func run() async throws {
        // Its output says what was merged: the log only what went wrong, unless asked.
        let logger = log.makeLogger(else: .warning)
        let outcome: CacheMerge.Outcome
        do {
            guard !caches.isEmpty else { throw ConfigurationError(message: "merge: give at least one cache to merge") }
            outcome = try CacheStore.merge(caches.map { CacheDirectory(root: URL(fileURLWithPath: $0)) },
                                           into: CacheDirectory(root: URL(fileURLWithPath: into)),
                                           pruner: try prune.pruner(), wait: try wait.seconds(), logger: logger)
        } catch {
            throw ExitCodes.fail(error)
        }
        for source in outcome.sources {
            var line = "\(source.path) (\(source.origin)): \(source.entriesTaken) entries taken (\(source.entriesNew) new), "
                + "\(source.entriesRefreshed) refreshed, \(source.entriesKept) kept as the target had them"
            if source.entriesMissingFiles > 0 { line += ", \(source.entriesMissingFiles) skipped (a file missing)" }
            if source.entriesDropped > 0 || source.profilesDropped > 0 {
                line += ", \(source.entriesDropped) entries and \(source.profilesDropped) profiles it no longer has dropped"
            }
            line += "; \(source.profilesTaken) profiles; files: \(source.filesLinked) linked, \(source.filesCopied) copied"
            print(line)
        }
        if !outcome.supersededOrigins.isEmpty {
            print("replaced what an earlier split brought: \(outcome.supersededOrigins.joined(separator: ", "))")
        }
        let plan = outcome.finish.plan
        let budget = outcome.finish.pruner
        print("merged \(outcome.sources.count) cache\(outcome.sources.count == 1 ? "" : "s") into \(into): \(outcome.entries) entries, \(outcome.profiles) profiles; "
            + "evicted \(plan.evicted.count) (\(ByteSize.format(plan.freedBytes))); cache \(ByteSize.format(outcome.finish.cacheBytes)) of \(ByteSize.format(budget.budgetBytes))\(budget.budgetOrigin.inWords)")
    }
}
