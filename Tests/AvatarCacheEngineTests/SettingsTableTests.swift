import ArgumentParser
import AvatarCacheLookupCommand
import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheModel
@testable import AvatarCacheStore
import AvatarCacheTestKit
@testable import avatar_cache_engine

/// The table of settings (`Settings`) is the one definition of each: these walk it and
/// check that a flag and a pipeline key take the same text to the same value and refuse
/// the same text in the same words, and that the CLI declares exactly the table's flags.
@Suite struct SettingsTableTests {
    /// The settings `warm` and `run` take as flags (the cache is each command's own).
    var flagged: [any AnySetting] { Settings.all.filter { $0.key != "cache" } }

    func fromFlag(_ setting: any AnySetting, _ text: String) throws -> PipelineSettings {
        let arguments = setting.key == "allow-private-networks" ? ["--\(setting.flag)"] : ["--\(setting.flag)", text]
        // The cache is read as every flag is; the pipeline key compared holds none.
        var settings = try Warm.parse(["e.json", "--cache", "c"] + arguments).settings()
        #expect(settings[Settings.cache] == "c")
        settings[Settings.cache] = nil
        return settings
    }

    func fromKey(_ key: String, _ text: String) throws -> PipelineSettings {
        let quoted = "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        return try PipelineFile.parse("\(key): \(quoted)\n", file: "t.yml", environment: [:])
    }

    func flagError(_ setting: any AnySetting, _ text: String) -> String? {
        do {
            _ = try Warm.parse(["e.json", "--cache", "c", "--\(setting.flag)", text])
            return nil
        } catch {
            return Warm.message(for: error)
        }
    }

    func keyError(_ key: String, _ text: String) -> String? {
        do {
            _ = try fromKey(key, text)
            return nil
        } catch let errors as PipelineFile.Errors {
            return errors.errors.first?.message
        } catch {
            return "\(error)"
        }
    }

    @Test func everySettingRoundTripsThroughItsFlagAndEachOfItsKeys() throws {
        #expect(flagged.count >= 37, "\(flagged.count) settings")
        for setting in flagged {
            let text = setting.examples.valid
            let viaFlag = try fromFlag(setting, setting.key == "allow-private-networks" ? "true" : text)
            let value = try #require(setting.written(in: viaFlag), "--\(setting.flag) \(text) set nothing")
            for key in [setting.key] + setting.otherKeys {
                let viaKey = try fromKey(key, text)
                #expect(setting.written(in: viaKey) == value, "\(key): \(text) vs --\(setting.flag) \(text)")
                #expect(viaKey == viaFlag, "\(key): the same settings as the flag")
            }
            // What is read is written back the same (the help's defaults are so written).
            if !setting.isList {
                #expect(setting.written(in: try fromKey(setting.key, value[0])) == value, "\(setting.key): \(value)")
            }
        }
    }

    @Test func aFlagAndAKeyRefuseTheSameValueInTheSameWords() throws {
        var refused = 0
        for setting in flagged where setting.key != "allow-private-networks" {
            guard let bad = setting.examples.invalid else { continue }
            let keyMessage = try #require(keyError(setting.key, bad), "\(setting.key): \(bad) was taken")
            let flagMessage = try #require(flagError(setting, bad), "--\(setting.flag) \(bad) was taken")
            #expect(flagMessage == "Error: --\(setting.flag): \(keyMessage)" || flagMessage == "--\(setting.flag): \(keyMessage)",
                    "flag: \(flagMessage) / key: \(keyMessage)")
            refused += 1
        }
        #expect(refused >= 30)
        // Ranges, each said once: out of range by flag and by key alike.
        #expect(keyError("quality", "101")?.contains("outside 1…100") == true)
        #expect(flagError(Settings.quality, "0")?.contains("outside 1…100") == true)
        #expect(keyError("timeout", "0")?.contains("outside 0.001…86400.0") == true)
        #expect(flagError(Settings.timeout, "0")?.contains("outside 0.001…86400.0") == true)
        #expect(flagError(Settings.trimRatio, "1.5")?.contains("between 0.01 and 1.0") == true)
        #expect(keyError("max-record-bytes", "500")?.contains("less than 1KB") == true)
    }

    @Test func theCommandDeclaresExactlyTheTablesFlags() throws {
        // warm's flags: its options and the shared groups it includes (its export and
        // cache are its own).
        let declared = Flags.labels(of: Warm.self).map(Flags.name).filter { $0 != "exports" && $0 != "cache" }
        #expect(Set(declared) == Set(flagged.map(\.flag)), "declared \(declared.sorted())")
        #expect(declared.count == Set(declared).count)
        // And swift-argument-parser names them so (its help shows each setting's help).
        let help = Warm.helpMessage(columns: 10_000)
        for setting in flagged where setting.key != Settings.logLevel.key {
            #expect(help.contains("--\(setting.flag)"), "--\(setting.flag) in the help")
            #expect(help.contains(setting.help), "--\(setting.flag)'s help from the table")
        }
        // --log-level's help is its one declaration's (CacheFlags.swift, beyond the table's
        // reach): the table's words, with merge's and verify's own default.
        #expect(help.contains(LogLevelOption.help))
        #expect(LogLevelOption.help.hasPrefix(String(Settings.logLevel.help.dropLast())), "\(LogLevelOption.help)")
        #expect(Settings.logLevel.choices == LogLevelOption.levels && Settings.logLevel.defaultText == LogLevelOption.defaultLevel)
    }

    /// `--budget` is one declaration (BudgetOption) for the five commands that size a
    /// cache (warm and run, merge, prune, verify, stats): the same help, the same value,
    /// the same refusal in the same words; `--trim-ratio` and `--wait` likewise.
    @Test func theSharedFlagsAreOneDeclarationForEveryCommand() throws {
        let sizing: [(any ParsableCommand.Type, [String])] = [
            (Warm.self, ["e.json", "--cache", "c"]), (Run.self, ["p.yml"]), (Merge.self, ["a", "--into", "b"]),
            (Prune.self, ["--cache", "c"]), (Verify.self, ["--cache", "c"]), (Stats.self, ["--cache", "c"]),
        ]
        for (command, arguments) in sizing {
            let help = command.helpMessage(columns: 10_000)
            #expect(help.contains("--budget <\(Settings.budget.valueName)>") && help.contains(Settings.budget.help), "\(command)")
            var refusal: String?
            do { _ = try command.parse(arguments + ["--budget", "12 parsecs"]) } catch { refusal = command.message(for: error) }
            let warmRefusal = flagError(Settings.budget, "12 parsecs")
            #expect(warmRefusal?.contains("--budget") == true)
            #expect(refusal == warmRefusal, "\(command): \(refusal ?? "accepted")")
        }
        // The value each reaches: 2 GB, in every command's own terms.
        #expect(try Prune.parse(["--cache", "c", "--budget", "2GB"]).prune.pruner().budgetBytes == 2_000_000_000)
        #expect(try Merge.parse(["a", "--into", "b", "--budget", "2GB"]).prune.pruner().budgetBytes == 2_000_000_000)
        #expect(try Verify.parse(["--cache", "c", "--budget", "2GB"]).budget.given() == 2_000_000_000)
        #expect(try Stats.parse(["--cache", "c", "--budget", "2GB"]).budget.given() == 2_000_000_000)
        #expect(try Warm.parse(["e.json", "--cache", "c", "--budget", "2GB"]).settings()[Settings.budget] == 2_000_000_000)
        #expect(try Warm.parse(["e.json", "--cache", "c", "--budget", "2GB"]).prune.pruner().budgetBytes == 2_000_000_000)
        // Not given: the default, which the cache's own replaces where it keeps one.
        let notGiven = try Prune.parse(["--cache", "c"]).prune.pruner()
        #expect(notGiven.budgetBytes == Settings.budget.defaultValue && notGiven.budgetOrigin == .default)
        #expect(try Verify.parse(["--cache", "c"]).budget.given() == nil)
        for (command, _) in sizing where command != Stats.self {
            #expect(command.helpMessage(columns: 10_000).contains(Settings.wait.help), "\(command)'s --wait")
        }
    }

    /// `--cache` and `--log-level` are one declaration each (CacheFlags.swift) for every
    /// command that opens a cache, inspect (which takes warm's command line) and merge (its
    /// cache is `--into`): each takes them, reads them by their settings, and refuses a
    /// wrong level, or a missing cache where one is required, as bad usage (64).
    @Test func everyCommandThatOpensACacheTakesTheOneCacheAndLogLevel() throws {
        let commands: [(any ParsableCommand.Type, [String])] = [
            (Warm.self, ["e.json", "--cache", "c"]), (Run.self, ["p.yml", "--cache", "c"]), (Inspect.self, ["e.json", "--cache", "c"]),
            (Prune.self, ["--cache", "c"]), (Verify.self, ["--cache", "c"]), (Stats.self, ["--cache", "c"]),
            (Merge.self, ["a", "--into", "c"]), (Lookup.self, ["--cache", "c", "--user", "u"]),
        ]
        let wrongLevel = "--log-level: expected one of trace, debug, info, notice, warning, error, critical, found \"loud\""
        for (command, arguments) in commands {
            _ = try command.parse(arguments + ["--log-level", "debug"])
            let help = command.helpMessage(columns: 10_000)
            #expect(help.contains("--log-level <level>") && help.contains(LogLevelOption.help), "\(command)")
            if command != Merge.self {
                #expect(help.contains("--cache <dir>"), "\(command)")
            }
            var refusal: String?
            do { _ = try command.parse(arguments + ["--log-level", "loud"]) } catch {
                refusal = command.message(for: error)
                #expect(command.exitCode(for: error) == ExitCode(64), "\(command)")
            }
            #expect(refusal == wrongLevel || refusal == "Error: " + wrongLevel, "\(command): \(refusal ?? "accepted")")
        }
        // A required --cache missing: bad usage, saying which.
        let required: [(any ParsableCommand.Type, [String])] = [
            (Warm.self, ["e.json"]), (Prune.self, []), (Verify.self, []), (Stats.self, []), (Lookup.self, ["--user", "u"]),
        ]
        for (command, arguments) in required {
            var refusal: String?
            do { _ = try command.parse(arguments) } catch {
                refusal = command.message(for: error)
                #expect(command.exitCode(for: error) == ExitCode(64), "\(command)")
            }
            #expect(refusal?.contains("--cache <dir>") == true, "\(command): \(refusal ?? "accepted")")
        }
        #expect(try Run.parse(["p.yml"]).cache.cache == nil && Inspect.parse(["e.json"]).cache.cache == nil)
        // The values, read by their settings as warm reads every flag.
        let warm = try Warm.parse(["e.json", "--cache", "c", "--log-level", "DEBUG"]).settings()
        #expect(warm[Settings.cache] == "c" && warm[Settings.logLevel] == .debug)
        let runCommand = try Run.parse(["p.yml", "--cache", "c", "--log-level", "error"])
        let run = try Flags.settings(of: runCommand.cache, runCommand.options)
        #expect(run[Settings.cache] == "c" && run[Settings.logLevel] == .error)
        #expect(try Prune.parse(["--cache", "c", "--log-level", "notice"]).log.level() == .notice)
        #expect(try Prune.parse(["--cache", "c"]).log.level() == .info)
        #expect(try Merge.parse(["a", "--into", "c"]).log.level(else: .warning) == .warning)
        #expect(try Stats.parse(["--cache", "c", "--log-level", "trace"]).log.level() == .trace)
        #expect(try Verify.parse(["--cache", "c"]).cache.directory.root.lastPathComponent == "c")
    }

    /// A setting needs no property of its own: what a file or a flag says of it is held
    /// under its key, and nothing else is; no two settings share a key.
    @Test func everySettingIsHeldUnderItsKeyAlone() throws {
        #expect(Set(Settings.all.map(\.key)).count == Settings.all.count, "two settings share a key")
        for setting in Settings.all {
            var settings = PipelineSettings()
            try setting.take([setting.examples.valid], into: &settings)
            #expect(settings.keys == [setting.key], "\(setting.key): \(settings.keys)")
            #expect(setting.written(in: settings) != nil, "\(setting.key)")
        }
    }

    @Test func theDefaultsAreTheTablesAndPassItsChecks() throws {
        let configuration = WarmConfiguration(exports: ["x"], cacheDirectory: URL(fileURLWithPath: "/tmp/x"))
        try configuration.validate()
        #expect(configuration.quality == Settings.quality.defaultValue)
        #expect(configuration.ttl == Settings.ttlHours.defaultValue * 3600)
        #expect(configuration.fetchLimits.maxBytes == Int(Settings.maxBytes.defaultValue))
        #expect(configuration.pruner.budgetBytes == Settings.budget.defaultValue)
        // Settings with a default show it in the help, as the value is written.
        #expect(Settings.budget.help.hasSuffix("Default: the cache's own, else 100MB."))
        #expect(Settings.ttlHours.help.hasSuffix("Default: 168."))
        #expect(Settings.sizes.help.hasSuffix("Default: 110 and 300."))
        // A value set in code is checked as if it had been read.
        var wrong = configuration
        wrong.fetchLimits.timeout = 0
        #expect(throws: ConfigurationError.self) { try wrong.validate() }
        var settings = PipelineSettings()
        settings[Settings.cache] = "/tmp/x"
        settings.inputs = [PipelineInput(path: "x.json")]
        settings[Settings.maxFailureRate] = 2
        #expect(throws: ConfigurationError.self) { try settings.configuration(environment: [:]) }
    }

    @Test func anEmptyPathMeansNone() throws {
        #expect(try fromKey("report", "")[Settings.report] == nil)
        #expect(try fromKey("metrics-file", "")[Settings.metricsFile] == nil)
        #expect(try PipelineOptions.parse(["--report", ""]).settings()[Settings.report] == nil)
    }
}

extension SettingsTableTests {
    /// docs/commands.md's table of `warm`'s flags has a row for every setting, and where a
    /// setting's default is a value, the row shows that value.
    @Test func theCommandsPageListsEveryFlagWithTheTablesDefault() throws {
        let page = try Fixtures.page("docs/commands.md")
        let section = try #require(page.components(separatedBy: "## `avatar-cache warm ").dropFirst().first)
        var rows: [String: String] = [:]
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `--") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let flag = cells[0].split(separator: " ").first else { continue }
            rows[String(flag.replacingOccurrences(of: "`", with: "").dropFirst(2))] = cells[1].replacingOccurrences(of: "`", with: "")
        }
        for setting in Settings.all {
            let shown = try #require(rows[setting.flag], "docs/commands.md has no row for --\(setting.flag)")
            guard let words = setting.defaultText, let written = (setting as? any DefaultWritten)?.writtenDefault,
                  words == written.joined(separator: " and ") else { continue }
            #expect(shown == written.joined(separator: ", "), "--\(setting.flag): docs/commands.md says \(shown), the table \(written)")
        }
    }
}

/// A setting's default as written, when it has one.
protocol DefaultWritten {
    var writtenDefault: [String]? { get }
}

extension Setting: DefaultWritten {
    var writtenDefault: [String]? { initial.map(form.written) }
}
