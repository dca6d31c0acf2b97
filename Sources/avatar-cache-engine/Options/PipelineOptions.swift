import ArgumentParser
import AvatarCache
import Foundation

/// Every setting of a run as a flag. All optional: a flag given overrides the pipeline
/// file's key of the same name; one not given leaves the file's value or the default.
///
/// Each flag's help, value name and choices, and the reading and checking of its value,
/// are its setting's (`Settings`); a flag is only a declaration, named as its setting's
/// flag in camel case (`maxTtlHours` is `--max-ttl-hours`). Values are read by the
/// setting, not by swift-argument-parser, so a flag and a pipeline key take the same
/// text and refuse it in the same words.
struct PipelineOptions: ParsableArguments {
    @Option(help: Settings.format.argumentHelp, completion: Settings.format.completion) var format: String?
    @Option(help: Settings.shard.argumentHelp) var shard: String?
    @Option(help: Settings.map.argumentHelp) var map: [String] = []

    // Images
    @Option(help: Settings.sizes.argumentHelp) var size: [String] = []
    @Option(help: Settings.scales.argumentHelp) var scale: [String] = []
    @Option(help: Settings.crop.argumentHelp, completion: Settings.crop.completion) var crop: String?
    @Option(help: Settings.outputFormat.argumentHelp, completion: Settings.outputFormat.completion) var outputFormat: String?
    @Option(help: Settings.monogramFormat.argumentHelp, completion: Settings.monogramFormat.completion) var monogramFormat: String?
    @Option(help: Settings.quality.argumentHelp) var quality: String?

    // Cache policy
    @Option(help: Settings.budget.argumentHelp) var budget: String?
    @Option(help: Settings.trimRatio.argumentHelp) var trimRatio: String?
    @Option(help: Settings.ttlHours.argumentHelp) var ttlHours: String?
    @Option(help: Settings.maxTTLHours.argumentHelp) var maxTtlHours: String?
    @Option(help: Settings.failureTTLHours.argumentHelp) var failureTtlHours: String?

    // Concurrency
    @Option(help: Settings.concurrency.argumentHelp) var concurrency: String?
    @Option(help: Settings.decodeThreads.argumentHelp) var decodeThreads: String?
    @Option(help: Settings.maxConnectionsPerHost.argumentHelp) var maxConnectionsPerHost: String?

    // Limits
    @Option(help: Settings.maxBytes.argumentHelp) var maxBytes: String?
    @Option(help: Settings.maxPixels.argumentHelp) var maxPixels: String?
    @Option(help: Settings.maxDecodeMemory.argumentHelp) var maxDecodeMemory: String?
    @Option(help: Settings.maxDownloadMemory.argumentHelp) var maxDownloadMemory: String?
    @Option(help: Settings.maxRecordBytes.argumentHelp) var maxRecordBytes: String?
    @Option(help: Settings.timeout.argumentHelp) var timeout: String?
    @Option(help: Settings.connectTimeout.argumentHelp) var connectTimeout: String?
    @Option(help: Settings.maxRedirects.argumentHelp) var maxRedirects: String?
    @Option(help: Settings.retries.argumentHelp) var retries: String?
    @Option(help: Settings.maxRetryWait.argumentHelp) var maxRetryWait: String?
    @Option(help: Settings.sourceDeadline.argumentHelp) var sourceDeadline: String?
    @Flag(help: ArgumentHelp(Settings.allowPrivateNetworks.help)) var allowPrivateNetworks = false
    @Option(help: Settings.allowHosts.argumentHelp) var allowHost: [String] = []

    // Monica
    @Option(help: Settings.monicaHost.argumentHelp) var monicaHost: String?
    @Option(help: Settings.monicaTokenFile.argumentHelp) var monicaTokenFile: String?
    @Option(help: Settings.monicaTokenEnv.argumentHelp) var monicaTokenEnv: String?

    // Operation
    @Option(help: Settings.wait.argumentHelp) var wait: String?
    @Option(help: Settings.report.argumentHelp) var report: String?
    @Option(help: Settings.metricsFile.argumentHelp) var metricsFile: String?
    @Option(help: Settings.logFormat.argumentHelp, completion: Settings.logFormat.completion) var logFormat: String?
    @Option(help: Settings.maxFailureRate.argumentHelp) var maxFailureRate: String?
    @Option(help: Settings.logLevel.argumentHelp, completion: Settings.logLevel.completion) var logLevel: String?

    /// A wrong value is bad usage (64), found before anything runs.
    func validate() throws {
        do { _ = try settings() } catch let error as ConfigurationError { throw ValidationError(error.message) }
    }

    /// The settings these flags give (nothing for flags not given): each declaration
    /// above, found by its name, read by its setting.
    func settings() throws -> PipelineSettings {
        var settings = PipelineSettings()
        for child in Mirror(reflecting: self).children {
            guard let label = child.label, let argument = child.value as? WrittenArgument else { continue }
            let flag = Self.flagName(of: label)
            // A declaration no setting names is caught by SettingsTableTests.
            guard let setting = Settings.byFlag[flag] else { continue }
            let written = argument.written
            guard !written.isEmpty else { continue }
            do {
                try setting.take(written, into: &settings)
            } catch {
                throw ConfigurationError(message: setting.flagMessage(error))
            }
        }
        return settings
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
}

/// What a flag was given, as written: nothing when it was not.
protocol WrittenArgument {
    var written: [String] { get }
}

extension Option: WrittenArgument where Value: WrittenValues {
    var written: [String] { wrappedValue.written }
}

extension Flag: WrittenArgument where Value == Bool {
    var written: [String] { wrappedValue ? ["true"] : [] }
}

protocol WrittenValues {
    var written: [String] { get }
}

extension Optional: WrittenValues where Wrapped == String {
    var written: [String] { map { [$0] } ?? [] }
}

extension Array: WrittenValues where Element == String {
    var written: [String] { self }
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
