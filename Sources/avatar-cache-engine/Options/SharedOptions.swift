import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation
import Logging

// How a flag is declared and read, for every command. A flag is declared once: warm and
// run's own in `PipelineOptions`; those several commands take, in a group here (`--budget`,
// `--trim-ratio`, `--wait`) or, for `--cache` and `--log-level`, in AvatarCacheLookupCommand
// (CacheFlags.swift), which the front binary's `lookup` shares; a command includes a group
// with `@OptionGroup`. A flag is read one way, whichever the command: `Flags.settings`
// hands its value, as written, to the setting of its name (`Settings.byFlag`), which reads
// and checks it as it reads a pipeline file's key; a command then takes the value from the
// settings so read.
//
// Walking `--budget` from any command to its use, four files: the command's (an
// `@OptionGroup` of `PruneOptions` or `BudgetOption`), this one (its declaration, and its
// reading), Settings.swift (`Settings.budget`: its form, its default, where it lands, the
// run's `pruner`) and Pruner.swift (the pruner, which keeps the cache under it).

/// `--budget`: warm and run (through `PruneOptions`), merge, prune, verify and stats.
struct BudgetOption: ParsableArguments {
    @Option(help: Settings.budget.argumentHelp) var budget: Written<Int64>?

    /// The budget given, or nil: the cache's own (the last writer given one recorded
    /// it), else the setting's default (100MB).
    func given() throws -> Int64? { try Flags.settings(of: self)[Settings.budget] }

    func validate() throws { _ = try given() }
}

/// `--budget` and `--trim-ratio`: what a prune keeps, for warm and run, merge and prune.
struct PruneOptions: ParsableArguments {
    @OptionGroup var budget: BudgetOption
    @Option(help: Settings.trimRatio.argumentHelp) var trimRatio: Written<Double>?

    func validate() throws { _ = try pruner() }

    /// The budget and trim ratio given; those not given are the cache's own, else the defaults.
    func pruner() throws -> Pruner {
        let settings = try Flags.settings(of: self)
        return Pruner(budgetBytes: settings[Settings.budget], trimRatio: settings[Settings.trimRatio])
    }
}

/// `--wait`: how long a command waits for the lock another run holds (every cache's it
/// opens, for merge), for warm and run, merge, prune and verify.
struct WaitOption: ParsableArguments {
    @Option(help: Settings.wait.argumentHelp) var wait: Written<Double>?

    /// The wait given, else the setting's default.
    func seconds() throws -> TimeInterval { try Flags.settings(of: self)[Settings.wait] ?? Settings.wait.defaultValue }

    func validate() throws { _ = try seconds() }
}

extension CacheOption<String> {
    /// The cache directory given.
    var directory: CacheDirectory { CacheDirectory(root: URL(fileURLWithPath: cache)) }
}

extension LogLevelOption {
    /// The level given, read by its setting (`Settings.logLevel`), else `fallback`: the
    /// setting's default (`info`), or `.warning` for merge and verify.
    func level(else fallback: Logger.Level = Settings.logLevel.defaultValue) throws -> Logger.Level {
        try Flags.settings(of: self)[Settings.logLevel] ?? fallback
    }

    /// A logger of text lines on stderr at the level given, else `fallback`.
    func makeLogger(else fallback: Logger.Level = Settings.logLevel.defaultValue) -> Logger {
        Logging.make(format: .text, level: (try? level(else: fallback)) ?? fallback, progress: nil)
    }
}

/// Reads flags as their settings: the one way a command's flags become values.
enum Flags {
    /// The settings the flags of these parts give (nothing for flags not given): a
    /// command's option groups, each flag read by the setting of its name (`maxTtlHours`
    /// is `--max-ttl-hours`, the setting whose flag that is). No flag needs a line here: a
    /// flag whose name is no setting's, or whose value does not reach its setting, fails
    /// SettingsTableTests. A wrong value is a `ValidationError` (bad usage, 64) in the
    /// setting's words, the same as a pipeline file's key is refused in.
    static func settings(of parts: Any...) throws -> PipelineSettings {
        var settings = PipelineSettings()
        for part in parts { try take(part, into: &settings) }
        return settings
    }

    /// Each flag of `options` (and of its option groups) read by the setting of its name.
    private static func take(_ options: Any, into settings: inout PipelineSettings) throws {
        for child in Mirror(reflecting: options).children {
            if let group = child.value as? any FlagGroup {
                try take(group.parsedGroup, into: &settings)
                continue
            }
            guard let label = child.label, let setting = Settings.byFlag[name(of: label)] else { continue }
            let texts = written(by: child.value)
            guard !texts.isEmpty else { continue }
            do {
                try setting.take(texts, into: &settings)
            } catch {
                throw ValidationError(setting.flagMessage(error))
            }
        }
    }

    /// The flags these options declare, their groups' included, as property labels.
    static func labels(of options: ParsableArguments.Type) -> [String] {
        Mirror(reflecting: options.init()).children.flatMap { child -> [String] in
            if let group = type(of: child.value) as? any FlagGroup.Type { return labels(of: group.groupType) }
            return child.label.map { [$0] } ?? []
        }
    }

    /// `_maxTtlHours` → `max-ttl-hours`, as swift-argument-parser names a long flag.
    static func name(of label: String) -> String {
        var name = ""
        for character in label.drop(while: { $0 == "_" }) {
            if character.isUppercase {
                name += "-" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }

    /// What a flag's property wrapper (`@Option`, `@Flag`) holds once parsed, as written:
    /// its one parsed value, reached through the wrapper's stored value.
    static func written(by wrapper: Any) -> [String] {
        guard let parsed = Mirror(reflecting: wrapper).children.first?.value,
              let value = Mirror(reflecting: parsed).children.first?.value,
              let texts = value as? any WrittenTexts else { return [] }
        return texts.writtenTexts
    }
}

/// A command's option groups, looked into when its flags are read by their settings
/// (`Flags.settings`) and listed (`Flags.labels`).
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

/// A flag's value as the texts its setting reads: none when the flag was not given.
protocol WrittenTexts {
    var writtenTexts: [String] { get }
}

extension Written: WrittenTexts {
    var writtenTexts: [String] { [text] }
}

/// A flag declared where the settings are out of reach (`--cache`, `--log-level`, which
/// the front binary's `lookup` shares): its text as given.
extension String: WrittenTexts {
    var writtenTexts: [String] { [self] }
}

extension Optional: WrittenTexts where Wrapped: WrittenTexts {
    var writtenTexts: [String] { self?.writtenTexts ?? [] }
}

/// A repeated flag: its values, read by its setting as one list.
extension Array: WrittenTexts where Element: WrittenTexts {
    var writtenTexts: [String] { flatMap(\.writtenTexts) }
}

/// A flag without a value (`--allow-private-networks`): "true" when given.
extension Bool: WrittenTexts {
    var writtenTexts: [String] { self ? ["true"] : [] }
}

/// A flag's value as written, for the setting of its type to read: `--quality` takes a
/// `Written<Int>`, which only a `Setting<Int>` reads. The setting reads it, not
/// swift-argument-parser, so a flag and a pipeline key take the same text and refuse it
/// in the same words (argument-parser would word a refusal its own way).
struct Written<Value>: ExpressibleByArgument {
    let text: String

    init(argument: String) {
        text = argument
    }
}

extension Setting {
    /// The help as swift-argument-parser takes it.
    var argumentHelp: ArgumentHelp { ArgumentHelp(help, valueName: valueName) }

    /// Its choices to complete, when it has a few.
    var completion: CompletionKind { choices.map { .list($0) } ?? .default }
}
