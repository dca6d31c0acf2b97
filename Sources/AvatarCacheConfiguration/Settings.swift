import AvatarCacheExports
import AvatarCacheFetching
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging

/// Every setting of a run, each defined once: its pipeline key and flag, the form and
/// range of its value, its default, its help, and where it lands in the run's
/// configuration. A pipeline file's keys, `warm` and `run`'s flags (`PipelineOptions`),
/// their help and its defaults, the checks of values read and of a configuration all come
/// from here; `WarmConfiguration` takes its defaults from here or from the stage's own type
/// (`Pruner`, `FetchLimits`). Adding a setting: its entry here (and in `all`), its flag line,
/// and its use (docs/development.md, "Adding a setting").
///
/// Defaults that a lower layer needs on its own (the budget for `prune`, the download
/// limits, the readers' record limit) are defined there and named here.
public enum Settings {
    // MARK: Inputs and output

    public static let cache = Setting<String>(
        "cache", .text("a directory path"),
        help: "The cache directory (created when missing).", valueName: "dir")
    public static let format = Setting<ExportFormat>(
        "format", .choice, defaultInWords: "detected per input",
        help: "Export format of every input.", valueName: "format")
    public static let shard = Setting<Shard>(
        "shard", .shard, defaultInWords: "every profile",
        help: "Take only this shard's profiles: i/n, the i-th of n from 0 (Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; Kubernetes: $JOB_COMPLETION_INDEX/n). Partitioned by a hash of the photo's source, else the user id. Merge the shards' caches with `avatar-cache merge`.",
        valueName: "i/n", binding: .optional(\.shard))
    public static let map = Setting<FieldMap>(
        "map", .fieldMap, default: FieldMap(), defaultInWords: "NexusAI's names, else chosen from the documents",
        help: "Where an app keeps its people: KEY=PATH, repeatable; keys users, id, name, given-name, family-name, photo, color, conversations, participants, updated-at, last-sender; a path reaches into maps and arrays (profile_photo.downloadUrl, imagePaths[0]); __name__ is a Firestore document's id (id=__name__); PATH|PATH: the first present wins.",
        valueName: "key=path", binding: .at(\.fieldMap))
    public static let storageBucket = Setting<String>(
        "storage-bucket", .text("a bucket name"),
        help: "The Firebase Storage bucket (my-app.appspot.com) a Firestore export's storage paths and gs:// photos are downloaded from, through its public download URL and every network rule; an emulator export's own objects are read from the export.",
        valueName: "bucket", binding: .optional(\.storageBucket))

    // MARK: Images

    public static let sizes = Setting<[Int]>(
        "sizes", flag: "size", otherKeys: ["size"], .list(of: .integer(1...2000), expected: "a list of point sizes"),
        default: [110, 300],
        help: "Decode size in points; repeat for several.", valueName: "pt", binding: .at(\.pointSizes))
    public static let scales = Setting<[Int]>(
        "scales", flag: "scale", otherKeys: ["scale"], .list(of: .integer(1...8), expected: "a list of scales"),
        default: [3], defaultInWords: "3 (330 px and 900 px)",
        help: "Pixels per point; repeat for several.", valueName: "n", binding: .at(\.scales))
    public static let crop = Setting<CropMode>(
        "crop", .choice, default: .centre,
        help: "How the square is cut: the middle, or libvips' attention crop.", valueName: "mode", binding: .at(\.crop))
    public static let outputFormat = Setting<OutputFormat>(
        "output-format", .choice, default: .jpeg,
        help: "Encoding of photo files.", valueName: "format", binding: .at(\.outputFormat))
    public static let monogramFormat = Setting<OutputFormat>(
        "monogram-format", .choice, default: .png,
        help: "Encoding of monograms: png and webp draw a disc on transparency, jpeg a filled square.",
        valueName: "format", binding: .at(\.monogramFormat))
    public static let quality = Setting<Int>(
        "quality", .integer(1...100), default: 82,
        help: "JPEG/WebP quality.", valueName: "q", binding: .at(\.quality))

    // MARK: Cache policy

    public static let budget = Setting<Int64>(
        "budget", .size(like: SettingForm.compact(Pruner.defaultBudgetBytes)), default: Pruner.defaultBudgetBytes,
        defaultInWords: "the cache's own, else \(SettingForm.compact(Pruner.defaultBudgetBytes))",
        help: "Cache budget; over it, least-recently-used entries are evicted down to the trim ratio (warm, run, merge, prune, which record it in the cache for every later command); verify and stats measure the cache against it.",
        valueName: "size", binding: .at(\.pruner.budgetBytes))
    public static let trimRatio = Setting<Double>(
        "trim-ratio", .number(Pruner.trimRatioRange), default: Pruner.defaultTrimRatio,
        defaultInWords: "the cache's own, else \(Pruner.defaultTrimRatio)",
        help: "Fraction of the budget to trim down to (kept by the cache as the budget is).", valueName: "ratio", binding: .at(\.pruner.trimRatio))
    public static let ttlHours = Setting<Double>(
        "ttl-hours", .number(0...100_000, of: "hours"), default: 7 * 24,
        help: "No request for a source fetched less than this long ago (unless the server said otherwise).",
        valueName: "hours", binding: .hours(\.ttl))
    public static let maxTTLHours = Setting<Double>(
        "max-ttl-hours", .number(0...100_000, of: "hours"), default: 30 * 24,
        help: "Cap on the freshness a server states (max-age, Expires).", valueName: "hours", binding: .hours(\.maxTTL))
    public static let failureTTLHours = Setting<Double>(
        "failure-ttl-hours", .number(0...100_000, of: "hours"), default: 24,
        help: "No new request for a source that failed for good this long ago (passing failures: at most 1 h).",
        valueName: "hours", binding: .hours(\.failureTTL))

    // MARK: Concurrency

    public static let concurrency = Setting<Int>(
        "concurrency", .integer(1...1024), default: 16,
        help: "Sources rendered at once: decoding, drawing or waiting for a decode thread (downloads: --requests-in-flight).",
        valueName: "n", binding: .at(\.concurrency))
    public static let requestsInFlight = Setting<Int>(
        "requests-in-flight", .integer(1...4096), default: 1024,
        help: "Downloads under way at once over all hosts, at most: as many as keep the decode threads fed (at least 16), within --max-download-memory.",
        valueName: "n", binding: .at(\.requestsInFlight))
    public static let requestsPerHost = Setting<Int>(
        "requests-per-host", .integer(1...4096), default: 1024,
        help: "Downloads under way at once to one HTTP/2 host, at most (and at most --streams-per-connection over each of its --max-connections-per-host); an HTTP/1.1 host gets its --max-connections-per-host.",
        valueName: "n", binding: .at(\.requestsPerHost))
    public static let decodeThreads = Setting<Int>(
        "decode-threads", .integer(1...256), default: min(256, ProcessInfo.processInfo.activeProcessorCount),
        defaultInWords: "the number of cores",
        help: "Threads decoding with libvips, one image each.", valueName: "n", binding: .at(\.decodeThreads))
    public static let maxConnectionsPerHost = Setting<Int>(
        "max-connections-per-host", .integer(1...1024), default: 8,
        help: "Connections to one host at once: an HTTP/1.1 host's, and an HTTP/2 host's, opened as its waiting requests need them (--streams-per-connection each).",
        valueName: "n", binding: .at(\.maxConnectionsPerHost))
    public static let streamsPerConnection = Setting<Int>(
        "streams-per-connection", .integer(1...1024), default: 100,
        help: "Downloads sent at once over one HTTP/2 connection; past them another connection to the host opens (up to --max-connections-per-host), unless the host is refusing.",
        valueName: "n", binding: .at(\.streamsPerConnection))

    // MARK: Limits

    public static let maxBytes = Setting<Int64>(
        "max-bytes", .size(like: SettingForm.compact(Int64(FetchLimits().maxBytes))), default: Int64(FetchLimits().maxBytes),
        help: "Largest download; the stream is cut there.", valueName: "size", binding: .bytes(\.fetchLimits.maxBytes))
    public static let maxPixels = Setting<Int>(
        "max-pixels", .integer(1...1_000_000_000), default: 50_000_000,
        help: "Largest image, width × height, read from the header before decoding.", valueName: "n", binding: .at(\.maxPixels))
    public static let maxDecodeMemory = Setting<Int64>(
        "max-decode-memory", .size(like: "84MB"), default: 84_000_000,
        help: "Memory the decodes in progress may hold together, estimated from each header; a decode over it waits.",
        valueName: "size", binding: .at(\.maxDecodeMemory))
    public static let maxDownloadMemory = Setting<Int64>(
        "max-download-memory", .size(like: "8MB"), default: 8_000_000,
        help: "Memory the photos being downloaded (by their Content-Length, for their first second) or waiting for their decode may hold together; over it no download starts (one always runs).",
        valueName: "size", binding: .at(\.maxDownloadMemory))
    public static let maxRecordBytes = Setting<Int64>(
        "max-record-bytes", .size(like: SettingForm.compact(Int64(ReaderLimits.defaultMaxRecordBytes)), atLeast: 1_000),
        default: Int64(ReaderLimits.defaultMaxRecordBytes),
        help: "Largest single record of an export (a JSON record, a vCard); a larger one is a bad record.",
        valueName: "size", binding: .bytes(\.maxRecordBytes))
    public static let timeout = Setting<Double>(
        "timeout", .number(0.001...86_400, of: "seconds"), default: FetchLimits().timeout,
        help: "Whole download, connect to last byte, in seconds.", valueName: "seconds", binding: .at(\.fetchLimits.timeout))
    public static let connectTimeout = Setting<Double>(
        "connect-timeout", .number(0.001...86_400, of: "seconds"), default: FetchLimits().connectTimeout,
        help: "Connect timeout in seconds.", valueName: "seconds", binding: .at(\.fetchLimits.connectTimeout))
    public static let maxRedirects = Setting<Int>(
        "max-redirects", .integer(0...50), default: FetchLimits().maxRedirects,
        help: "Redirects followed per source.", valueName: "n", binding: .at(\.fetchLimits.maxRedirects))
    public static let retries = Setting<Int>(
        "retries", .integer(0...10), default: FetchLimits().retries,
        help: "Retries after a timeout, network error, 408 or 5xx (a host's 429, or 503 naming a time, waits for it instead: --max-host-wait).", valueName: "n", binding: .at(\.fetchLimits.retries))
    public static let maxRetryWait = Setting<Double>(
        "max-retry-wait", .number(0...3600, of: "seconds"), default: FetchLimits().maxRetryWait,
        help: "Longest total wait between retries of one source.", valueName: "seconds", binding: .at(\.fetchLimits.maxRetryWait))
    public static let maxHostWait = Setting<Double>(
        "max-host-wait", .number(0...86_400, of: "seconds"), default: FetchLimits().maxHostWait,
        help: "Longest a run waits on one host's rate limits in all (429 or 503 with Retry-After, RateLimit headers); past it the host's remaining photos fail, keep their cached copies, and go first next run.",
        valueName: "seconds", binding: .at(\.fetchLimits.maxHostWait))
    public static let sourceDeadline = Setting<Double>(
        "source-deadline", .number(0.001...86_400, of: "seconds"), default: FetchLimits().sourceDeadline,
        help: "Whole source, every attempt, redirect and wait between attempts included; an attempt gets what is left when that is less than --timeout.",
        valueName: "seconds", binding: .at(\.fetchLimits.sourceDeadline))
    public static let allowPrivateNetworks = Setting<Bool>(
        "allow-private-networks", .boolean, default: false, helpOmitsDefault: true,
        help: "Allow photo hosts on loopback and private networks (refused by default). Link-local (169.254.169.254), unspecified, multicast and reserved addresses stay refused: only --allow-host opens one.",
        valueName: "bool", binding: .at(\.allowPrivateNetworks))
    public static let allowHosts = Setting<[String]>(
        "allow-hosts", flag: "allow-host", otherKeys: ["allow-host"],
        .list(of: .text("host or host:port"), expected: "a list of host or host:port", allowsEmpty: true),
        default: [], helpOmitsDefault: true,
        help: "Allow this host (host or host:port, exact) whatever it resolves to; repeatable. Redirects elsewhere are still checked.",
        valueName: "host", binding: .at(\.allowedHosts))

    public static let caFile = Setting<String>(
        "ca-file", .text("a path"),
        help: "PEM certificates of your own certificate authority (an intranet photo server's), trusted beside the system's roots.",
        valueName: "path", binding: .optional(\.caFile))

    // MARK: Monica

    public static let monicaHost = Setting<String>(
        "monica-host", .text("host or host:port"),
        help: "The only host the Monica token is sent to: host or host:port, matched exactly.", valueName: "host")
    public static let monicaTokenFile = Setting<String>(
        "monica-token-file", .text("a path"), help: "File holding the Monica token.", valueName: "path")
    public static let monicaTokenEnv = Setting<String>(
        "monica-token-env", .text("an environment variable name"), default: "AVATAR_CACHE_MONICA_TOKEN",
        help: "Environment variable holding the Monica token.", valueName: "name")

    // MARK: Operation

    public static let wait = Setting<Double>(
        "wait", .number(0...86_400, of: "seconds"), default: 0,
        help: "Wait up to this long for another run's lock instead of exiting with code 75.", valueName: "seconds",
        binding: .at(\.lockWait))
    public static let report = Setting<String>(
        "report", .pathOrNothing("a path (empty: none)"), help: "Write the JSON run report here.", valueName: "file")
    public static let metricsFile = Setting<String>(
        "metrics-file", .pathOrNothing("a path (empty: none)"),
        help: "Write the run's figures in the Prometheus text format here (atomically).", valueName: "path.prom")
    public static let logFormat = Setting<LogFormat>(
        "log-format", .choice, default: .text,
        help: "Log lines on stderr as text or one JSON object each.", valueName: "format")
    public static let logLevel = Setting<Logger.Level>(
        "log-level", .choice, default: .info, help: "How much is logged on stderr.", valueName: "level")
    public static let maxFailureRate = Setting<Double>(
        "max-failure-rate", .number(0...1), defaultInWords: "never",
        help: "Exit 3 when more than this fraction of the sources failed; an input read short of the records it states exits 5 unless those lost are at most this fraction of them.", valueName: "fraction")

    /// The table, in the order the help lists the flags.
    public static let all: [any AnySetting] = [
        cache, format, shard, map, storageBucket,
        sizes, scales, crop, outputFormat, monogramFormat, quality,
        budget, trimRatio, ttlHours, maxTTLHours, failureTTLHours,
        concurrency, requestsInFlight, requestsPerHost, decodeThreads, maxConnectionsPerHost, streamsPerConnection,
        maxBytes, maxPixels, maxDecodeMemory, maxDownloadMemory, maxRecordBytes, timeout, connectTimeout, maxRedirects, retries,
        maxRetryWait, maxHostWait, sourceDeadline, allowPrivateNetworks, allowHosts, caFile,
        monicaHost, monicaTokenFile, monicaTokenEnv,
        wait, report, metricsFile, logFormat, logLevel, maxFailureRate,
    ]

    /// Each setting by its long flag (without the dashes).
    public static let byFlag: [String: any AnySetting] = Dictionary(uniqueKeysWithValues: all.map { ($0.flag, $0) })

    /// Each setting by its pipeline keys (every spelling).
    public static let byKey: [String: any AnySetting] = Dictionary(
        uniqueKeysWithValues: all.flatMap { setting in ([setting.key] + setting.otherKeys).map { ($0, setting) } })
}
