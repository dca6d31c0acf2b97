import ArgumentParser
import AvatarCache
import Foundation

/// Every setting of a run as a flag. All optional: a flag given overrides the pipeline
/// file's key of the same name; one not given leaves the file's value or the default.
struct PipelineOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Export format of every input. Default: detected per input.", valueName: "format"))
    var format: ExportFormat?
    @Option(help: ArgumentHelp("Take only this shard's profiles: i/n, the i-th of n from 0 (Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; Kubernetes: $JOB_COMPLETION_INDEX/n). Partitioned by a hash of the photo's source, else the user id. Merge the shards' caches with `avatar-cache merge`. Default: every profile.", valueName: "i/n"),
            transform: { try Shard(parsing: $0) })
    var shard: Shard?

    // Images
    @Option(help: ArgumentHelp("Decode size in points; repeat for several. Default: 110 and 300.", valueName: "pt"))
    var size: [Int] = []
    @Option(help: ArgumentHelp("Pixels per point; repeat for several. Default: 3 (330 px and 900 px).", valueName: "n"))
    var scale: [Int] = []
    @Option(help: ArgumentHelp("How the square is cut: the middle, or libvips' attention crop. Default: centre.", valueName: "mode"))
    var crop: CropMode?
    @Option(help: ArgumentHelp("Encoding of photo files. Default: jpeg.", valueName: "format"))
    var outputFormat: OutputFormat?
    @Option(help: ArgumentHelp("Encoding of monograms: png and webp draw a disc on transparency, jpeg a filled square. Default: png.", valueName: "format"))
    var monogramFormat: OutputFormat?
    @Option(help: ArgumentHelp("JPEG/WebP quality, 1–100. Default: 82.", valueName: "q"))
    var quality: Int?

    // Cache policy
    @Option(help: ArgumentHelp("Cache budget; over it, least-recently-used entries are evicted down to the trim ratio. Default: 100MB.", valueName: "size"))
    var budget: ByteCount?
    @Option(help: ArgumentHelp("Fraction of the budget to trim down to. Default: 0.8.", valueName: "ratio"))
    var trimRatio: Double?
    @Option(help: ArgumentHelp("No request for a source fetched less than this long ago (unless the server said otherwise). Default: 168.", valueName: "hours"))
    var ttlHours: Double?
    @Option(help: ArgumentHelp("Cap on the freshness a server states (max-age, Expires). Default: 720.", valueName: "hours"))
    var maxTtlHours: Double?
    @Option(help: ArgumentHelp("No new request for a source that failed for good this long ago (passing failures: at most 1 h). Default: 24.", valueName: "hours"))
    var failureTtlHours: Double?

    // Concurrency
    @Option(help: ArgumentHelp("Sources in flight at once. Default: 16.", valueName: "n"))
    var concurrency: Int?
    @Option(help: ArgumentHelp("Threads decoding with libvips, one image each. Default: the number of cores.", valueName: "n"))
    var decodeThreads: Int?
    @Option(help: ArgumentHelp("Connections to one host at once. Default: 8.", valueName: "n"))
    var maxConnectionsPerHost: Int?

    // Limits
    @Option(help: ArgumentHelp("Largest download; the stream is cut there. Default: 20MB.", valueName: "size"))
    var maxBytes: ByteCount?
    @Option(help: ArgumentHelp("Largest image, width × height, read from the header before decoding. Default: 50000000.", valueName: "n"))
    var maxPixels: Int?
    @Option(help: ArgumentHelp("Memory the decodes in progress may hold together, estimated from each header; a decode over it waits. Default: 100MB.", valueName: "size"))
    var maxDecodeMemory: ByteCount?
    @Option(help: ArgumentHelp("Largest single record of an export (a JSON record, a vCard); a larger one is a bad record. Default: 28MB.", valueName: "size"))
    var maxRecordBytes: ByteCount?
    @Option(help: ArgumentHelp("Whole download, connect to last byte, in seconds. Default: 30.", valueName: "seconds"))
    var timeout: Double?
    @Option(help: ArgumentHelp("Connect timeout in seconds. Default: 10.", valueName: "seconds"))
    var connectTimeout: Double?
    @Option(help: ArgumentHelp("Redirects followed per source. Default: 5.", valueName: "n"))
    var maxRedirects: Int?
    @Option(help: ArgumentHelp("Retries after a timeout, network error, 408, 429 or 5xx. Default: 2.", valueName: "n"))
    var retries: Int?
    @Option(help: ArgumentHelp("Longest total wait between retries of one source. Default: 30.", valueName: "seconds"))
    var maxRetryWait: Double?
    @Option(help: ArgumentHelp("Whole source, every attempt, redirect and wait between attempts included; an attempt gets what is left when that is less than --timeout. Default: 60.", valueName: "seconds"))
    var sourceDeadline: Double?
    @Flag(help: "Allow photo hosts on loopback and private networks (refused by default). Link-local (169.254.169.254), unspecified, multicast and reserved addresses stay refused: only --allow-host opens one.")
    var allowPrivateNetworks = false
    @Option(help: ArgumentHelp("Allow this host (host or host:port, exact) whatever it resolves to; repeatable. Redirects elsewhere are still checked.", valueName: "host"))
    var allowHost: [String] = []

    // Monica
    @Option(help: ArgumentHelp("The only host the Monica token is sent to: host or host:port, matched exactly.", valueName: "host"))
    var monicaHost: String?
    @Option(help: ArgumentHelp("File holding the Monica token.", valueName: "path"))
    var monicaTokenFile: String?
    @Option(help: ArgumentHelp("Environment variable holding the Monica token. Default: AVATAR_CACHE_MONICA_TOKEN.", valueName: "name"))
    var monicaTokenEnv: String?

    // Operation
    @Option(help: ArgumentHelp("Wait up to this long for another run's lock instead of exiting with code 75. Default: 0.", valueName: "seconds"))
    var wait: Double?
    @Option(help: ArgumentHelp("Write the JSON run report here.", valueName: "file"))
    var report: String?
    @Option(help: ArgumentHelp("Write the run's figures in the Prometheus text format here (atomically).", valueName: "path.prom"))
    var metricsFile: String?
    @Option(help: ArgumentHelp("Log lines on stderr as text or one JSON object each. Default: text.", valueName: "format"))
    var logFormat: LogFormat?
    @Option(help: ArgumentHelp("Exit 3 when more than this fraction of the sources failed. Default: never.", valueName: "fraction"))
    var maxFailureRate: Double?
    @Option(help: ArgumentHelp("How much is logged on stderr. Default: info.", valueName: "level"))
    var logLevel: LogLevelArgument?

    /// The settings these flags give (nothing for flags not given).
    var settings: PipelineSettings {
        var settings = PipelineSettings()
        settings.format = format
        settings.shard = shard
        settings.sizes = size.isEmpty ? nil : size
        settings.scales = scale.isEmpty ? nil : scale
        settings.crop = crop
        settings.outputFormat = outputFormat
        settings.monogramFormat = monogramFormat
        settings.quality = quality
        settings.budget = budget?.bytes
        settings.trimRatio = trimRatio
        settings.ttlHours = ttlHours
        settings.maxTTLHours = maxTtlHours
        settings.failureTTLHours = failureTtlHours
        settings.concurrency = concurrency
        settings.decodeThreads = decodeThreads
        settings.maxConnectionsPerHost = maxConnectionsPerHost
        settings.maxBytes = maxBytes?.bytes
        settings.maxPixels = maxPixels
        settings.maxDecodeMemory = maxDecodeMemory?.bytes
        settings.maxRecordBytes = maxRecordBytes?.bytes
        settings.timeout = timeout
        settings.connectTimeout = connectTimeout
        settings.maxRedirects = maxRedirects
        settings.retries = retries
        settings.maxRetryWait = maxRetryWait
        settings.sourceDeadline = sourceDeadline
        settings.allowPrivateNetworks = allowPrivateNetworks ? true : nil
        settings.allowHosts = allowHost.isEmpty ? nil : allowHost
        settings.monicaHost = monicaHost
        settings.monicaTokenFile = monicaTokenFile
        settings.monicaTokenEnv = monicaTokenEnv
        settings.wait = wait
        settings.report = report
        settings.metricsFile = metricsFile
        settings.logFormat = logFormat
        settings.maxFailureRate = maxFailureRate
        return settings
    }
}

extension CropMode: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
