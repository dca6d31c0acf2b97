import AvatarCacheExports
import AvatarCacheFetching
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

/// Everything a warm-up run needs, in sections. The defaults and ranges of what a flag
/// or pipeline key sets are those of its setting (`Settings`); the comments leave them out.
public struct WarmConfiguration: Sendable {
    // MARK: Inputs and output

    /// Export files (or, for Jami, folders of vCards) to read.
    public var exports: [String]
    /// Their format; detected per export when nil.
    public var format: ExportFormat?
    /// Formats of particular exports (from a pipeline file's inputs); they win over
    /// `format`.
    public var exportFormats: [String: ExportFormat] = [:]
    /// The cache directory; created when missing.
    public var cacheDirectory: URL
    /// Take only this shard's profiles (`--shard i/n`): one machine's part of a run split
    /// across many, merged afterwards (`avatar-cache merge`).
    public var shard: Shard?
    /// Where the exports keep their people, when not NexusAI's names (`--map`).
    public var fieldMap = FieldMap()
    /// The Firebase Storage bucket of a Firestore export's storage paths (`--storage-bucket`).
    public var storageBucket: String?

    // MARK: Images

    /// Decode sizes in points: 15–55 pt views share the 110 pt decode, 150 pt views use 300.
    public var pointSizes: [Int] = Settings.sizes.defaultValue
    /// Pixels per point; several give several sets of tiers.
    public var scales: [Int] = Settings.scales.defaultValue
    /// How the square is cut from a photo that is not square.
    public var crop: CropMode = Settings.crop.defaultValue
    /// Encoding of the photo cache files.
    public var outputFormat: OutputFormat = Settings.outputFormat.defaultValue
    /// Encoding of monograms: PNG and WebP are a disc on transparency, JPEG fills the
    /// square with the colour.
    public var monogramFormat: OutputFormat = Settings.monogramFormat.defaultValue
    /// JPEG/WebP quality, 1–100.
    public var quality: Int = Settings.quality.defaultValue

    // MARK: Cache policy

    /// The eviction once the run is done, its defaults its own (settings land in it).
    public var pruner = Pruner()
    /// A source fetched within this many seconds is used without any request, unless the
    /// server stated its own freshness lifetime.
    public var ttl: TimeInterval = Settings.ttlHours.defaultValue * 3600
    /// Cap on a freshness lifetime the server states (Cache-Control max-age, Expires).
    public var maxTTL: TimeInterval = Settings.maxTTLHours.defaultValue * 3600
    /// A source that failed for good (404, 401, not an image, too large…) is not
    /// asked for again before this many seconds; one that failed for a passing reason
    /// (timeout, network, 5xx) waits at most an hour.
    public var failureTTL: TimeInterval = Settings.failureTTLHours.defaultValue * 3600

    /// How long a source that failed this way is remembered, and not asked for again:
    /// `failureTTL`, at most an hour for failures that may pass by themselves (timeouts,
    /// 5xx). A source its host's limits kept waiting past `--max-host-wait` is remembered
    /// for `failureTTL` but asked again on the next run, before the others (the plan).
    public func retryWait(after failureClass: FailureClass) -> TimeInterval {
        failureClass.isTransient && failureClass != .rateLimited ? min(3600, failureTTL) : failureTTL
    }

    // MARK: Concurrency

    /// Sources rendered at once: decoding, drawing or waiting for a decode thread.
    /// Downloads are limited apart (`requestsInFlight`). Default 16.
    public var concurrency: Int = Settings.concurrency.defaultValue
    /// Downloads under way at once over all hosts, at most: within it, as many as keep the
    /// decode threads fed (`RequestLimiter`), and `maxDownloadMemory`. Default 1024.
    public var requestsInFlight: Int = Settings.requestsInFlight.defaultValue
    /// Downloads under way at once to one HTTP/2 host, at most: within it, at most
    /// `streamsPerConnection` over each of `maxConnectionsPerHost` connections; an HTTP/1.x
    /// host gets `maxConnectionsPerHost`. Default 1024.
    public var requestsPerHost: Int = Settings.requestsPerHost.defaultValue
    /// Threads decoding with libvips, one image each.
    public var decodeThreads: Int = Settings.decodeThreads.defaultValue
    /// Connections to one host at once: an HTTP/1.x host's, and an HTTP/2 host's, opened as
    /// its waiting requests need them, `streamsPerConnection` each (`ConnectionSpread`). Default 8.
    public var maxConnectionsPerHost: Int = Settings.maxConnectionsPerHost.defaultValue
    /// Requests sent at once over one HTTP/2 connection before another to the same host
    /// opens (`ConnectionSpread`). Default 100 (Google's front ends allow 100 streams, nginx 128).
    public var streamsPerConnection: Int = Settings.streamsPerConnection.defaultValue

    // MARK: Limits

    /// Download limits: bytes, timeout, connect timeout, redirects, retries, whole-source
    /// deadline.
    public var fetchLimits = FetchLimits()
    /// Largest image accepted, in pixels, read from the header before decoding.
    public var maxPixels: Int = Settings.maxPixels.defaultValue
    /// Largest single record of an export (a JSON record, a vCard), in bytes.
    public var maxRecordBytes: Int = ReaderLimits.defaultMaxRecordBytes
    /// Memory the decodes in progress may hold together (estimated from each header);
    /// a decode over it waits for the others.
    public var maxDecodeMemory: Int64 = Settings.maxDecodeMemory.defaultValue
    /// Memory the bodies being downloaded or waiting for their decode may hold together
    /// (by their `Content-Length` while downloading); over it no download starts.
    public var maxDownloadMemory: Int64 = Settings.maxDownloadMemory.defaultValue
    /// Allow hosts on loopback and private networks (RFC 1918, unique-local, CGNAT); never
    /// link-local, unspecified, multicast or reserved addresses (`NetworkPolicy`).
    public var allowPrivateNetworks: Bool = Settings.allowPrivateNetworks.defaultValue
    /// Hosts (`host` or `host:port`) allowed whatever they resolve to.
    public var allowedHosts: [String] = Settings.allowHosts.defaultValue
    /// An operator's own certificate authority, trusted beside the system's (`--ca-file`).
    public var caFile: String?
    /// The Monica API token and its host, for `photo` avatars.
    public var monica: MonicaCredential?
    /// Seconds to wait for another run's lock on the cache; 0 fails at once.
    public var lockWait: TimeInterval = Settings.wait.defaultValue

    public init(exports: [String], cacheDirectory: URL) {
        self.exports = exports
        self.cacheDirectory = cacheDirectory
    }

    /// The pixel tiers, largest first.
    public var tiers: [Int] { Array(Set(pointSizes.flatMap { size in scales.map { size * $0 } })).sorted(by: >) }

    /// Checks every value against its setting's range (`Settings`); the message names
    /// the flag.
    public func validate() throws {
        if exports.isEmpty { throw ConfigurationError(message: "no export given") }
        for setting in Settings.all { try setting.check(self) }
    }
}
