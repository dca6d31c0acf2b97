import AvatarCacheExports
import AvatarCacheFetching
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

/// What a run did: the `--report` JSON and the closing summary. Field names are part
/// of the documented interface (docs/guide.md, "Report").
public struct RunReport: Codable, Sendable {
    public struct Failure: Codable, Sendable {
        public var url: String
        public var failureClass: FailureClass
        public var reason: String
        /// True when a previously cached photo was kept despite the failure.
        public var keptCachedPhoto: Bool

        enum CodingKeys: String, CodingKey {
            case url, reason, keptCachedPhoto
            case failureClass = "class"
        }
    }

    public var version = AvatarCacheVersion.string
    public var startedAt: Date
    public var durationSeconds: Double = 0
    public var exports: [String]
    public var cacheDirectory: String

    /// Distinct profiles (user ids) read from the exports.
    public var profiles = 0
    /// Profile records read (a user in two exports counts twice; bad records excluded).
    public var profileRecords = 0
    /// With `--shard`: which one (`i/n`), and the records left to the other shards
    /// (not counted anywhere else in this report).
    public var shard: String?
    public var recordsInOtherShards = 0
    /// Profiles without a photo in the export (they get a monogram).
    public var profilesWithoutPhoto = 0
    /// After the run: profiles whose cache shows a photo, a monogram, or nothing.
    public var profilesWithPhoto = 0
    public var profilesWithMonogram = 0
    public var profilesWithNothing = 0
    public var badRecords = 0
    /// What the readers chose (the collection and fields of people read through a field
    /// map, and how many had each) and found (Auth accounts merged).
    public var inputNotes: [String] = []
    /// What each input states it holds against what was read (`InputCount`), and the
    /// records stated and not read, summed.
    public var inputCounts: [InputCount] = []
    public var recordsLost = 0
    /// Distinct source URLs.
    public var sources = 0
    /// Sources cached within the TTL: no request made.
    public var fresh = 0
    /// Sources downloaded in this run.
    public var downloaded = 0
    /// Stale sources the server confirmed unchanged (304): no download, no decode.
    public var notModified = 0
    /// Downloaded sources whose bytes were already cached (another URL, earlier run): no decode.
    public var reusedIdentical = 0
    /// Sources decoded and written in this run.
    public var decoded = 0
    /// Photos carried by the export itself (Jami vCards, Monica data: URLs) processed.
    public var inlinePhotos = 0
    /// Distinct monograms drawn in this run.
    public var monogramsRendered = 0
    public var failed = 0
    /// Sources that failed in an earlier run and are not asked for again yet.
    public var skippedRecentlyFailed = 0
    public var failuresByClass: [String: Int] = [:]
    /// Requests sent again at once because the server never processed them (it rotated
    /// its connection: an HTTP/2 GOAWAY or refused stream, a keep-alive connection closed
    /// before the answer): neither retries nor failures.
    public var requestsResent = 0
    /// The most requests in flight at once, over all hosts (at most `--requests-in-flight`).
    public var peakRequestsInFlight = 0
    /// The most bytes the downloaded bodies waiting for (or in) their decode held at once:
    /// `--max-download-memory` bounds them, give or take the body that crossed it.
    public var peakBytesWaitingForDecode = 0
    /// Per photo host (scheme, host and port): requests, refusals by status, the time its
    /// limits held it, the pace it settled at; every host whose limits slowed the run
    /// first, then the busiest, at most 100.
    public var hosts: [HostReport] = []
    public var bytesDownloaded: Int64 = 0
    public var filesWritten = 0
    /// Bytes of every file in the cache after the run (and prune).
    public var cacheBytes: Int64 = 0
    /// The budget the run pruned to, and where it came from (`given` to this run, the
    /// `cache`'s own, or the `default`).
    public var budgetBytes: Int64
    public var budgetOrigin: Pruner.Origin?
    /// Entries evicted by the prune.
    public var evicted = 0
    public var evictedBytes: Int64 = 0
    /// Temporary leftovers and unreferenced files removed at the start.
    public var sweptFiles = 0
    /// Set when the run was stopped early (a signal): why. What was done is saved.
    public var interrupted: String?
    /// Up to 1,000 failures, in the order they happened.
    public var failures: [Failure] = []
    /// Up to 1,000 bad records.
    public var badRecordDetails: [BadRecord] = []
    /// Photos decoded past damage the decoder recovered from (a JPEG's stray byte or
    /// short data segment, with an end-of-image marker): cached, as a browser shows them.
    public var recoveredImages = 0
    /// Up to 1,000 of them: the source and the decoder's words.
    public var recoveredImageDetails: [Recovered] = []

    public struct Recovered: Codable, Sendable {
        public var url: String
        public var reason: String
    }

    static let detailLimit = 1000

    /// What the job stages did.
    mutating func add(_ jobs: JobTally) {
        downloaded += jobs.downloaded
        notModified += jobs.notModified
        reusedIdentical += jobs.reusedIdentical
        decoded += jobs.decoded
        inlinePhotos += jobs.inlinePhotos
        monogramsRendered += jobs.monogramsRendered
        bytesDownloaded += jobs.bytesDownloaded
        filesWritten += jobs.filesWritten
        failed += jobs.failed
        failuresByClass.merge(jobs.failuresByClass, uniquingKeysWith: +)
        failures += jobs.failures.prefix(max(0, Self.detailLimit - failures.count))
        recoveredImages += jobs.recoveredImages
        recoveredImageDetails += jobs.recoveredImageDetails.prefix(max(0, Self.detailLimit - recoveredImageDetails.count))
        requestsResent = max(requestsResent, jobs.requestsResent)   // the fetcher's count, over the run
        peakRequestsInFlight = max(peakRequestsInFlight, jobs.peakRequestsInFlight)
        peakBytesWaitingForDecode = max(peakBytesWaitingForDecode, jobs.peakBytesWaitingForDecode)
        if !jobs.hosts.isEmpty { hosts = jobs.hosts }   // the limiter's, over the run
    }

    /// The hosts whose limits slowed the run (held it, refused requests, or ran out of
    /// `--max-host-wait`), most held first.
    public var limitedHosts: [HostReport] {
        hosts.filter { $0.waitSeconds > 0 || $0.refusalCount > 0 || $0.outOfBudget != nil }
            .sorted { ($0.waitSeconds, $0.refusalCount, $1.host) > ($1.waitSeconds, $1.refusalCount, $0.host) }
    }

    /// The host whose limits slowed the run most (held longest, then refused most), if any did.
    public var slowestHost: HostReport? { limitedHosts.first }

    /// "host https://gravatar.example:443 slowed the run: 11 refused (429 ×11), held 10.6 s,
    /// 1.02 answers a second".
    var slowestHostText: String? {
        guard let host = slowestHost else { return nil }
        var text = "host \(host.host) slowed the run: "
        text += host.refusalCount > 0 ? "\(host.refusalCount) refused (\(host.refusalsText))" : "its rate limit spent"
        text += ", held \(String(format: "%.1f", host.waitSeconds)) s"
        if let reason = host.outOfBudget {
            text += ", its remaining photos failed: \(reason)"
        } else if let pace = host.answersPerSecond {
            text += ", \(String(format: "%.2f", pace)) answers a second"
        }
        return text
    }

    /// What the read stage found.
    mutating func add(_ read: ReadStage.Outcome) {
        profiles = read.profiles
        sources = read.sources
        profileRecords += read.profileRecords
        recordsInOtherShards += read.recordsInOtherShards
        inputNotes += read.notes
        inputCounts += read.counts
        recordsLost = inputCounts.reduce(0) { $0 + $1.lost }
        badRecords += read.badRecords
        badRecordDetails += read.badRecordDetails.prefix(max(0, Self.detailLimit - badRecordDetails.count))
    }

    /// "documents read 1550 of 1550 stated", each unit summed over the inputs.
    var countsText: String? {
        guard !inputCounts.isEmpty else { return nil }
        var units: [String] = []
        var sums: [String: (read: Int, stated: Int)] = [:]
        for count in inputCounts {
            if sums[count.unit] == nil { units.append(count.unit) }
            sums[count.unit, default: (0, 0)].read += count.read
            sums[count.unit, default: (0, 0)].stated += count.stated
        }
        return units.map { "\($0) read \(sums[$0]!.read) of \(sums[$0]!.stated) stated" }.joined(separator: ", ")
            + (recordsLost > 0 ? " (\(recordsLost) LOST)" : "")
    }

    /// One line for people.
    public var summary: String {
        var text = shard.map { "shard \($0) (\(recordsInOtherShards) records left to the other shards): " } ?? ""
        text += "\(profiles) profiles, \(sources) sources in \(String(format: "%.1f", durationSeconds)) s: "
        text += "\(downloaded) downloaded, \(decoded) decoded, \(fresh) fresh, \(notModified) not modified, \(reusedIdentical) identical to cached, \(failed) failed"
        if !failuresByClass.isEmpty {
            text += " (" + failuresByClass.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        if skippedRecentlyFailed > 0 { text += ", \(skippedRecentlyFailed) failed recently and not retried yet" }
        text += "; \(profilesWithPhoto) profiles show a photo, \(profilesWithMonogram) a monogram (\(monogramsRendered) drawn)"
        if profilesWithNothing > 0 { text += ", \(profilesWithNothing) nothing" }
        if badRecords > 0 { text += "; \(badRecords) bad records" }
        if let countsText { text += "; \(countsText)" }
        text += "; cache \(ByteSize.format(cacheBytes)) of \(ByteSize.format(budgetBytes))\(budgetOrigin?.inWords ?? "")"
        if evicted > 0 { text += ", \(evicted) evicted (\(ByteSize.format(evictedBytes)))" }
        if let slowestHostText { text += "; \(slowestHostText)" }
        return text
    }

    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
