import Foundation

/// Everything a warm-up run needs, in sections. Each option's comment ends with its
/// default.
public struct WarmConfiguration: Sendable {
    // MARK: Inputs and output

    /// Export files (or, for Jami, folders of vCards) to read.
    public var exports: [String]
    /// Their format; detected per export when nil. Default nil.
    public var format: ExportFormat?
    /// Formats of particular exports (from a pipeline file's inputs); they win over
    /// `format`. Default none.
    public var exportFormats: [String: ExportFormat] = [:]
    /// The cache directory; created when missing.
    public var cacheDirectory: URL
    /// Take only this shard's profiles (`--shard i/n`): one machine's part of a run split
    /// across many, merged afterwards (`avatar-cache merge`). Default nil: every profile.
    public var shard: Shard?

    // MARK: Images

    /// Decode sizes in points: 15–55 pt views share the 110 pt decode, 150 pt views use 300. Default [110, 300].
    public var pointSizes: [Int] = [110, 300]
    /// Pixels per point; several give several sets of tiers. Default [3] (330 px and 900 px).
    public var scales: [Int] = [3]
    /// How the square is cut from a photo that is not square. Default centre.
    public var crop: CropMode = .centre
    /// Encoding of the photo cache files. Default JPEG.
    public var outputFormat: OutputFormat = .jpeg
    /// Encoding of monograms: PNG and WebP are a disc on transparency, JPEG fills the
    /// square with the colour. Default PNG.
    public var monogramFormat: OutputFormat = .png
    /// JPEG/WebP quality, 1–100. Default 82.
    public var quality: Int = 82

    // MARK: Cache policy

    /// Cache budget in bytes. Default 100 MB (100,000,000 bytes).
    public var budgetBytes: Int64 = Pruner.defaultBudgetBytes
    /// After going over budget, trim down to this fraction of it. Default 0.8.
    public var trimRatio: Double = Pruner.defaultTrimRatio
    /// A source fetched within this many seconds is used without any request, unless the
    /// server stated its own freshness lifetime. Default 7 days.
    public var ttl: TimeInterval = 7 * 24 * 3600
    /// Cap on a freshness lifetime the server states (Cache-Control max-age, Expires).
    /// Default 30 days.
    public var maxTTL: TimeInterval = 30 * 24 * 3600
    /// A source that failed for good (404, 401, not an image, too large…) is not
    /// asked for again before this many seconds; one that failed for a passing reason
    /// (timeout, network, 5xx) waits at most an hour. Default 24 hours.
    public var failureTTL: TimeInterval = 24 * 3600

    /// How long a source that failed this way is not asked for again: `failureTTL`, at
    /// most an hour for failures that may pass by themselves (timeouts, 5xx).
    public func retryWait(after failureClass: FailureClass) -> TimeInterval {
        failureClass.isTransient ? min(3600, failureTTL) : failureTTL
    }

    // MARK: Concurrency

    /// Sources in flight at once (downloading or decoding). Default 16.
    public var concurrency: Int = 16
    /// Threads decoding with libvips, one image each. Default: the number of cores.
    public var decodeThreads: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Connections to one host at once. Default 8.
    public var maxConnectionsPerHost: Int = 8

    // MARK: Limits

    /// Download limits: bytes (20 MB), timeout (30 s), connect timeout (10 s), redirects (5),
    /// retries (2), whole-source deadline (60 s).
    public var fetchLimits = FetchLimits()
    /// Largest image accepted, in pixels, read from the header before decoding. Default 50,000,000.
    public var maxPixels: Int = 50_000_000
    /// Largest single record of an export (a JSON record, a vCard), in bytes. Default 28 MB.
    public var maxRecordBytes: Int = ReaderLimits.defaultMaxRecordBytes
    /// Memory the decodes in progress may hold together (estimated from each header);
    /// a decode over it waits for the others. Default 100 MB.
    public var maxDecodeMemory: Int64 = 100_000_000
    /// Allow hosts on loopback, private and link-local networks. Default false.
    public var allowPrivateNetworks = false
    /// Hosts (`host` or `host:port`) allowed whatever they resolve to. Default none.
    public var allowedHosts: [String] = []
    /// The Monica API token and its host, for `photo` avatars. Default none.
    public var monica: MonicaCredential?
    /// Seconds to wait for another run's lock on the cache; 0 fails at once. Default 0.
    public var lockWait: TimeInterval = 0

    public init(exports: [String], cacheDirectory: URL) {
        self.exports = exports
        self.cacheDirectory = cacheDirectory
    }

    /// The pixel tiers, largest first.
    public var tiers: [Int] { Array(Set(pointSizes.flatMap { size in scales.map { size * $0 } })).sorted(by: >) }

    /// Checks values that would make the run meaningless; the message names the option.
    public func validate() throws {
        func fail(_ message: String) throws { throw ConfigurationError(message: message) }
        if exports.isEmpty { try fail("no export given") }
        if pointSizes.isEmpty || pointSizes.contains(where: { $0 <= 0 || $0 > 2000 }) { try fail("sizes must be between 1 and 2000 points") }
        if scales.isEmpty || scales.contains(where: { !(1...8).contains($0) }) { try fail("--scale must be between 1 and 8") }
        if maxTTL < 0 { try fail("--max-ttl-hours must not be negative") }
        if fetchLimits.retries < 0 || fetchLimits.retries > 10 { try fail("--retries must be between 0 and 10") }
        if !(1...100).contains(quality) { try fail("--quality must be between 1 and 100") }
        if budgetBytes <= 0 { try fail("--budget must be more than 0 bytes") }
        try Pruner.checkTrimRatio(trimRatio)
        if ttl < 0 { try fail("--ttl must not be negative") }
        if !(1...1024).contains(concurrency) { try fail("--concurrency must be between 1 and 1024") }
        if !(1...256).contains(decodeThreads) { try fail("--decode-threads must be between 1 and 256") }
        if !(fetchLimits.timeout > 0) { try fail("--timeout must be more than 0 seconds") }
        if !(fetchLimits.sourceDeadline > 0) { try fail("--source-deadline must be more than 0 seconds") }
        if fetchLimits.maxBytes <= 0 { try fail("--max-bytes must be more than 0") }
        if fetchLimits.maxRedirects < 0 { try fail("--max-redirects must not be negative") }
        if maxPixels <= 0 { try fail("--max-pixels must be more than 0") }
        if maxRecordBytes < 1_000 { try fail("--max-record-bytes must be at least 1KB") }
        if maxDecodeMemory <= 0 { try fail("--max-decode-memory must be more than 0") }
    }
}
