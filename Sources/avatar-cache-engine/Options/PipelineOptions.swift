import ArgumentParser
import AvatarCache
import Foundation
import Logging

/// Every setting of a run as a flag, but those other commands take too (`--budget`,
/// `--trim-ratio`, `--wait`: SharedOptions.swift, which warm and run include beside
/// these). All optional: a flag given overrides the pipeline
/// file's key of the same name; one not given leaves the file's value or the default.
///
/// Each flag's help, value name and choices, and the reading and checking of its value,
/// are its setting's (`Settings`); a flag is one line, a declaration of its value's type,
/// named as its setting's flag in camel case (`maxTtlHours` is `--max-ttl-hours`). Values
/// are read by the setting, not by swift-argument-parser, so a flag and a pipeline key
/// take the same text and refuse it in the same words.
struct PipelineOptions: ParsableArguments {
    @Option(help: Settings.format.argumentHelp, completion: Settings.format.completion) var format: Written<ExportFormat>?
    @Option(help: Settings.shard.argumentHelp) var shard: Written<Shard>?
    @Option(help: Settings.map.argumentHelp) var map: [Written<FieldMap>] = []
    @Option(help: Settings.storageBucket.argumentHelp) var storageBucket: Written<String>?

    // Images
    @Option(help: Settings.sizes.argumentHelp) var size: [Written<[Int]>] = []
    @Option(help: Settings.scales.argumentHelp) var scale: [Written<[Int]>] = []
    @Option(help: Settings.crop.argumentHelp, completion: Settings.crop.completion) var crop: Written<CropMode>?
    @Option(help: Settings.outputFormat.argumentHelp, completion: Settings.outputFormat.completion) var outputFormat: Written<OutputFormat>?
    @Option(help: Settings.monogramFormat.argumentHelp, completion: Settings.monogramFormat.completion) var monogramFormat: Written<OutputFormat>?
    @Option(help: Settings.quality.argumentHelp) var quality: Written<Int>?

    // Cache policy
    @Option(help: Settings.ttlHours.argumentHelp) var ttlHours: Written<Double>?
    @Option(help: Settings.maxTTLHours.argumentHelp) var maxTtlHours: Written<Double>?
    @Option(help: Settings.failureTTLHours.argumentHelp) var failureTtlHours: Written<Double>?

    // Concurrency
    @Option(help: Settings.concurrency.argumentHelp) var concurrency: Written<Int>?
    @Option(help: Settings.requestsInFlight.argumentHelp) var requestsInFlight: Written<Int>?
    @Option(help: Settings.requestsPerHost.argumentHelp) var requestsPerHost: Written<Int>?
    @Option(help: Settings.decodeThreads.argumentHelp) var decodeThreads: Written<Int>?
    @Option(help: Settings.maxConnectionsPerHost.argumentHelp) var maxConnectionsPerHost: Written<Int>?
    @Option(help: Settings.streamsPerConnection.argumentHelp) var streamsPerConnection: Written<Int>?

    // Limits
    @Option(help: Settings.maxBytes.argumentHelp) var maxBytes: Written<Int64>?
    @Option(help: Settings.maxPixels.argumentHelp) var maxPixels: Written<Int>?
    @Option(help: Settings.maxDecodeMemory.argumentHelp) var maxDecodeMemory: Written<Int64>?
    @Option(help: Settings.maxDownloadMemory.argumentHelp) var maxDownloadMemory: Written<Int64>?
    @Option(help: Settings.maxRecordBytes.argumentHelp) var maxRecordBytes: Written<Int64>?
    @Option(help: Settings.timeout.argumentHelp) var timeout: Written<Double>?
    @Option(help: Settings.connectTimeout.argumentHelp) var connectTimeout: Written<Double>?
    @Option(help: Settings.maxRedirects.argumentHelp) var maxRedirects: Written<Int>?
    @Option(help: Settings.retries.argumentHelp) var retries: Written<Int>?
    @Option(help: Settings.maxRetryWait.argumentHelp) var maxRetryWait: Written<Double>?
    @Option(help: Settings.maxHostWait.argumentHelp) var maxHostWait: Written<Double>?
    @Option(help: Settings.sourceDeadline.argumentHelp) var sourceDeadline: Written<Double>?
    @Flag(help: ArgumentHelp(Settings.allowPrivateNetworks.help)) var allowPrivateNetworks = false
    @Option(help: Settings.allowHosts.argumentHelp) var allowHost: [Written<[String]>] = []

    // Monica
    @Option(help: Settings.caFile.argumentHelp) var caFile: Written<String>?
    @Option(help: Settings.monicaHost.argumentHelp) var monicaHost: Written<String>?
    @Option(help: Settings.monicaTokenFile.argumentHelp) var monicaTokenFile: Written<String>?
    @Option(help: Settings.monicaTokenEnv.argumentHelp) var monicaTokenEnv: Written<String>?

    // Operation
    @Option(help: Settings.report.argumentHelp) var report: Written<String>?
    @Option(help: Settings.metricsFile.argumentHelp) var metricsFile: Written<String>?
    @Option(help: Settings.logFormat.argumentHelp, completion: Settings.logFormat.completion) var logFormat: Written<LogFormat>?
    @Option(help: Settings.maxFailureRate.argumentHelp) var maxFailureRate: Written<Double>?
    @Option(help: Settings.logLevel.argumentHelp, completion: Settings.logLevel.completion) var logLevel: Written<Logger.Level>?

    /// A wrong value is bad usage (64), found before anything runs.
    func validate() throws {
        do { _ = try settings() } catch let error as ConfigurationError { throw ValidationError(error.message) }
    }

    /// The settings these flags give (nothing for flags not given): each flag read by
    /// the setting of its name (`maxTtlHours` is `--max-ttl-hours`, the setting whose flag
    /// that is). No flag needs a line here: a flag whose name is no setting's, or whose
    /// value does not reach its setting, fails SettingsTableTests.
    func settings() throws -> PipelineSettings {
        try Self.settings(of: self)
    }

    /// The settings the flags of these parts give: a command's `PipelineOptions` and the
    /// shared option groups it includes.
    static func settings(of parts: Any...) throws -> PipelineSettings {
        var settings = PipelineSettings()
        for part in parts { try take(part, into: &settings) }
        return settings
    }

    /// Each flag of `options` (and of its option groups, the flags commands share) read by
    /// the setting of its name.
    private static func take(_ options: Any, into settings: inout PipelineSettings) throws {
        for child in Mirror(reflecting: options).children {
            if let group = child.value as? any FlagGroup {
                try take(group.parsedGroup, into: &settings)
                continue
            }
            guard let label = child.label, let setting = Settings.byFlag[flagName(of: label)] else { continue }
            let texts = written(by: child.value)
            guard !texts.isEmpty else { continue }
            do {
                try setting.take(texts, into: &settings)
            } catch {
                throw ConfigurationError(message: setting.flagMessage(error))
            }
        }
    }

    /// The flags these options declare, their groups' included, as property labels.
    static func flagLabels(of options: ParsableArguments.Type = PipelineOptions.self) -> [String] {
        Mirror(reflecting: options.init()).children.flatMap { child -> [String] in
            if let group = type(of: child.value) as? any FlagGroup.Type { return flagLabels(of: group.groupType) }
            return child.label.map { [$0] } ?? []
        }
    }

    /// `_maxTtlHours` → `max-ttl-hours`, as swift-argument-parser names a long flag.
    static func flagName(of label: String) -> String {
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

/// A flag's value as the texts its setting reads: none when the flag was not given.
protocol WrittenTexts {
    var writtenTexts: [String] { get }
}

extension Written: WrittenTexts {
    var writtenTexts: [String] { [text] }
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

extension Setting {
    /// The help of a command's own flag for this setting: its own words, the setting's
    /// value name and default (or the command's own default).
    func argumentHelp(summary: String, default ownDefault: String? = nil) -> ArgumentHelp {
        ArgumentHelp(summary + ((ownDefault ?? defaultText).map { " Default: \($0)." } ?? ""), valueName: valueName)
    }

    /// A maintenance command's flag for this setting, read as `warm` reads it: the value
    /// given, else `fallback`, else the setting's default. A wrong value is bad usage.
    func value(of text: String?, else fallback: Value? = nil) throws -> Value {
        if let text, let value = try readFlag(text) { return value }
        return fallback ?? defaultValue
    }

    private func readFlag(_ text: String) throws -> Value? {
        do { return try read([text]) } catch { throw ValidationError(flagMessage(error)) }
    }
}
