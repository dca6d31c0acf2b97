import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation

/// Every setting of a run as a flag, but those other commands take too (`--cache`,
/// `--budget`, `--trim-ratio`, `--wait`: SharedOptions.swift, which warm and run include
/// beside these; `--log-level`, included here). All optional: a flag given overrides the
/// pipeline file's key of the same name; one not given leaves the file's value or the default.
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
    @OptionGroup var logLevel: LogLevelOption

    /// A wrong value is bad usage (64), found before anything runs.
    func validate() throws { _ = try settings() }

    /// The settings these flags give (nothing for flags not given), each read by the
    /// setting of its name (`Flags.settings`).
    func settings() throws -> PipelineSettings {
        try Flags.settings(of: self)
    }
}
