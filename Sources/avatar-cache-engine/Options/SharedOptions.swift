import ArgumentParser
import AvatarCache
import Foundation
import Logging

// The flags more than one command takes, each declared once, here, and read by its
// setting (`Settings`) as warm reads it: a command takes one with `@OptionGroup`. Walking
// `--budget` from any of the five commands that size a cache to the pruner: the command's
// file, this one, `Settings.budget` (Settings.swift).

/// `--budget`: warm and run (through PipelineOptions' PruneOptions), merge, prune, verify
/// and stats.
struct BudgetOption: ParsableArguments {
    @Option(help: Settings.budget.argumentHelp) var budget: Written<Int64>?

    /// The budget given, or nil: the cache's own (the last writer given one recorded
    /// it), else the setting's default (100MB).
    func given() throws -> Int64? { try budget.map { try Settings.budget.value(of: $0.text) } }

    func validate() throws { _ = try given() }
}

/// `--budget` and `--trim-ratio`: what a prune keeps, for warm and run, merge and prune.
struct PruneOptions: ParsableArguments {
    @OptionGroup var budget: BudgetOption
    @Option(help: Settings.trimRatio.argumentHelp) var trimRatio: Written<Double>?

    func validate() throws { _ = try pruner() }

    /// The budget and trim ratio given; those not given are the cache's own, else the defaults.
    func pruner() throws -> Pruner {
        Pruner(budgetBytes: try budget.given(), trimRatio: try trimRatio.map { try Settings.trimRatio.value(of: $0.text) })
    }
}

/// `--wait`: how long a command waits for the lock another run holds (every cache's it
/// opens, for merge), for warm and run, merge, prune and verify.
struct WaitOption: ParsableArguments {
    @Option(help: Settings.wait.argumentHelp) var wait: Written<Double>?

    /// The wait given, else the setting's default.
    func seconds() throws -> TimeInterval { try Settings.wait.value(of: wait?.text) }

    func validate() throws { _ = try seconds() }
}

/// `--cache`, for the commands that read or maintain a cache made already (prune, verify,
/// stats).
struct CacheDirectoryOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cache directory.", valueName: "dir"))
    var cache: String

    var url: URL { URL(fileURLWithPath: cache) }
    var directory: CacheDirectory { CacheDirectory(root: url) }
}

/// A command's option groups, looked into when its flags are read by their settings
/// (`PipelineOptions.settings`) and listed (`PipelineOptions.flagLabels`).
protocol FlagGroup {
    /// The group's type, to list its flags without parsing.
    static var groupType: ParsableArguments.Type { get }
    /// The group as parsed.
    var parsedGroup: Any { get }
}

extension OptionGroup: FlagGroup {
    static var groupType: ParsableArguments.Type { Value.self }
    var parsedGroup: Any { wrappedValue }
}
