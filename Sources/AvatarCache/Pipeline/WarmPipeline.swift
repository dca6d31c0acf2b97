import Foundation
import Logging

/// A warm-up run, start to end:
///
///     lock cache -> load metadata -> merge lookups' access journal -> sweep leftovers
///       -> read exports (stream; bad records reported) -> profiles and distinct sources,
///          in priority order (most recently active conversations first)
///       -> plan (cached within the TTL, or inline and already cached: no work)
///       -> photo jobs, bounded: fetch (or take the inline bytes) -> hash
///          -> render once per distinct content (decode pool) -> write files atomically
///       -> monogram jobs for profiles left without a photo (one per distinct
///          initials + colours)
///       -> merge into metadata -> prune (LRU to budget × trim ratio)
///       -> point each profile at its photo or monogram
///       -> save metadata atomically -> delete unreferenced files -> report
///
/// Each job catches its own error: one bad source never stops the batch. Only a
/// failure of the cache itself (disk full, read-only) ends the run, and then the
/// previous metadata is left as it was.
public final class WarmPipeline: Sendable {
    public let configuration: WarmConfiguration
    let logger: Logger
    let control: RunControl
    let onProgress: (@Sendable (RunProgress) -> Void)?

    /// `control` stops the run early (signals); `onProgress` hears of every finished job.
    public init(configuration: WarmConfiguration, logger: Logger, control: RunControl = RunControl(),
                onProgress: (@Sendable (RunProgress) -> Void)? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        self.onProgress = onProgress
    }

    /// What a job makes: a photo from the network or the export, or a monogram.
    enum Work: Sendable {
        case download(String, sendMonicaToken: Bool)
        case inline(InlinePhoto)
        case monogram(MonogramSpec)
    }

    struct Job: Sendable {
        var key: String
        var work: Work
        var rank: Int
        var previous: CacheEntry?
    }

    struct Outcome: Sendable {
        var entry: CacheEntry
        var bytesDownloaded: Int
        var rendered: RenderedFiles
        /// The server answered 304: nothing was downloaded or written.
        var notModified = false
    }

    /// What the read stage gathers.
    struct Gathered {
        /// Profiles by id, with the order in which they were first seen.
        var profiles: [String: (profile: Profile, rank: Int)] = [:]
        /// Distinct photo sources in priority order, with the first rank that used them.
        var sources: [(key: String, photo: PhotoSource, rank: Int)] = []
    }

    public func run() async throws -> RunReport {
        try configuration.validate()
        try Vips.initialise()
        let started = Date()
        let directory = CacheDirectory(root: configuration.cacheDirectory)
        var report = RunReport(
            startedAt: started,
            exports: configuration.exports,
            cacheDirectory: directory.root.path,
            budgetBytes: configuration.budgetBytes
        )
        try directory.create()
        let lock = try CacheLock.acquire(in: directory, wait: configuration.lockWait)
        defer { lock.release() }

        var metadata = try directory.loadMetadata()
        metadata.failures = metadata.failures.filter { $0.value.retryAfter > started }
        let journal = AccessJournal(directory: directory)
        journal.merge(into: &metadata)
        // One listing for the run (the directory is ours while the lock is held): only
        // temporary leftovers are swept now; unreferenced cache files may be re-used below
        // (a run killed before saving, a metadata file moved aside) and are swept at the end.
        let referenced = metadata.referencedFiles
        var listing = try directory.listFiles()
        let swept = Set(try directory.sweep(keeping: referenced, leftoversOnly: true, in: listing))
        report.sweptFiles = swept.count
        if !swept.isEmpty { listing.removeAll { swept.contains($0.name) } }
        var sizes = Dictionary(listing.map { ($0.name, $0.size) }, uniquingKeysWith: { a, _ in a })
        try directory.markRunStarted()

        let gathered = try readExports(into: &report)
        let known = knownContent(metadata, sizes: sizes, referenced: referenced, directory: directory)
        let photoJobs = plan(gathered, metadata: &metadata, started: started, report: &report, known: known)
        // One HTTP client, decode pool and writer for both stages, made when a job needs them.
        var workers: Workers?
        do {
            try await process(photoJobs, stage: "photos", known: known, workers: &workers, metadata: &metadata, started: started, report: &report)
            updateProfiles(gathered, metadata: &metadata, started: started)
            let monogramJobs = planMonograms(metadata: &metadata, gathered: gathered, started: started, known: known)
            try await process(monogramJobs, stage: "monograms", known: known, workers: &workers, metadata: &metadata, started: started, report: &report)
        } catch {
            await workers?.shutdown()
            throw error
        }
        await workers?.shutdown()
        if let reason = control.stopReason {
            report.interrupted = reason
            logger.notice("stopped early: what is done is saved", metadata: ["reason": "\(reason)"])
        }

        let maintenance = CacheMaintenance(directory: directory, logger: logger)
        // Sizes known without a stat: the listing above and the files this run wrote.
        for entry in metadata.entries.values where entry.fetchedAt >= started {
            for file in entry.files.values { sizes[file.filename] = file.fileSize }
        }
        let pruned = try maintenance.pruneAndSave(metadata, pruner: Pruner(budgetBytes: configuration.budgetBytes, trimRatio: configuration.trimRatio),
                                                  knownSizes: sizes)
        try? journal.clear()
        try directory.markRunFinished()
        report.evicted = pruned.plan.evicted.count
        report.evictedBytes = pruned.plan.freedBytes
        report.cacheBytes = pruned.cacheBytes
        // What each profile shows once the prune is done (pruneAndSave points them).
        tally(gathered, metadata: pruned.plan.metadata, report: &report)
        report.durationSeconds = Date().timeIntervalSince(started)
        return report
    }

    // MARK: Read

    private func readExports(into report: inout RunReport) throws -> Gathered {
        var gathered = Gathered()
        var sourceIndex: [String: Int] = [:]
        var limits = ReaderLimits()
        limits.maxInlineBytes = configuration.fetchLimits.maxBytes
        for path in configuration.exports {
            let format = try configuration.exportFormats[path] ?? configuration.format ?? ExportFormat.detect(path: path)
            var profilesInFile = 0, badInFile = 0
            var firstBad: BadRecord?
            try format.reader(path: path, limits: limits).read { item in
                switch item {
                case .profile(var profile):
                    profilesInFile += 1
                    report.profileRecords += 1
                    // Credentials in a URL are never sent, logged or stored.
                    if case let .url(url, token) = profile.photo { profile.photo = .url(redactedURL(url), sendMonicaToken: token) }
                    let rank = gathered.profiles[profile.id]?.rank ?? gathered.profiles.count
                    gathered.profiles[profile.id] = (profile, rank)
                    guard let photo = profile.photo else { return }
                    if let index = sourceIndex[photo.key] {
                        // A URL one record marks for the Monica token keeps it.
                        if case .url(let url, true) = photo { gathered.sources[index].photo = .url(url, sendMonicaToken: true) }
                    } else {
                        sourceIndex[photo.key] = gathered.sources.count
                        gathered.sources.append((photo.key, photo, rank))
                    }
                case .bad(let bad):
                    badInFile += 1
                    firstBad = firstBad ?? bad
                    report.record(bad)
                    logger.warning("bad record", metadata: ["record": "\(bad)"])
                }
            }
            if profilesInFile == 0, badInFile > 0, let firstBad {
                throw ExportError(file: path, reason: "read as \(format.rawValue), no record was usable; the first: record \(firstBad.index) (line \(firstBad.line)): \(firstBad.reason). Is --format right?")
            }
        }
        report.sources = gathered.sources.count
        report.profiles = gathered.profiles.count
        return gathered
    }

    // MARK: Plan

    /// Content already on disk, complete for the tiers and format asked for: reused, never
    /// decoded again.
    private func knownContent(_ metadata: CacheMetadata, sizes: [String: Int64], referenced: Set<String>,
                              directory: CacheDirectory) -> [String: RenderedFiles] {
        var known: [String: RenderedFiles] = [:]
        for entry in metadata.entries.values where isComplete(entry, sizes: sizes) {
            known[entry.contentSHA256] = RenderedFiles(entry)
        }
        // Cache files no entry references, grouped by content: when every tier of a photo
        // is there, a download with that content re-uses them instead of decoding again.
        var orphans: [String: [Int: String]] = [:]
        for name in sizes.keys where CacheDirectory.isCacheFileName(name) && !referenced.contains(name)
            && name.hasSuffix(".\(configuration.outputFormat.fileExtension)") {
            let stem = name.split(separator: ".")[0].split(separator: "-")
            if let tier = Int(stem[1]) { orphans[String(stem[0]), default: [:]][tier] = name }
        }
        for (hash, files) in orphans where known[hash] == nil {
            if let recovered = recover(hash: hash, files: files, directory: directory) { known[hash] = recovered }
        }
        return known
    }

    /// An orphaned photo's files, read back (size, SHA-256, side from the header), when
    /// the largest tier is there; smaller tiers missing from disk share the largest file
    /// only when it is no bigger than they are.
    private func recover(hash: String, files: [Int: String], directory: CacheDirectory) -> RenderedFiles? {
        var result: [String: CacheFile] = [:]
        for tier in configuration.tiers {
            guard let name = files[tier] ?? files.filter({ $0.key > tier }).min(by: { $0.key < $1.key })?.value,
                  let data = FileManager.default.contents(atPath: directory.root.appendingPathComponent(name).path),
                  let side = try? AvatarRenderer.headerSide([UInt8](data)), side <= tier else { return nil }
            result[String(tier)] = CacheFile(filename: name, width: side, height: side, fileSize: Int64(data.count), sha256: SHA256Hex.of([UInt8](data)))
        }
        return RenderedFiles(format: nil, sourceWidth: nil, sourceHeight: nil, files: result, renderedNow: false)
    }

    /// A file for every tier asked for, in the format asked for, on disk with the
    /// recorded size.
    private func isComplete(_ entry: CacheEntry, sizes: [String: Int64]) -> Bool {
        let format = entry.kind == .monogram ? configuration.monogramFormat : configuration.outputFormat
        return configuration.tiers.allSatisfy { tier in
            guard let file = entry.files[String(tier)] else { return false }
            return file.filename.hasPrefix(entry.contentSHA256)
                && file.filename.hasSuffix(".\(format.fileExtension)")
                && sizes[file.filename] == file.fileSize
        }
    }

    /// The access time recorded for a source of this rank: the run's start, a
    /// millisecond earlier per rank, so the first in priority order count as the most
    /// recently used when the budget cannot hold everyone.
    private func accessTime(_ rank: Int, started: Date) -> Date {
        started.addingTimeInterval(-Double(rank) / 1000)
    }

    private func plan(
        _ gathered: Gathered, metadata: inout CacheMetadata, started: Date, report: inout RunReport,
        known: [String: RenderedFiles]
    ) -> [Job] {
        var jobs: [Job] = []
        for source in gathered.sources {
            let previous = metadata.entries[source.key]
            let complete = previous.map { known[$0.contentSHA256] != nil } ?? false
            if let previous, complete {
                let inline: Bool
                if case .inline = source.photo { inline = true } else { inline = false }
                // Inline photos are named by their content: cached means current.
                let freshUntil = previous.freshUntil ?? previous.fetchedAt.addingTimeInterval(configuration.ttl)
                if inline || started < freshUntil {
                    report.fresh += 1
                    metadata.entries[source.key]?.lastAccess = accessTime(source.rank, started: started)
                    continue
                }
            }
            if !complete, metadata.failures[source.key] != nil {
                // Failed recently: not asked for again before its retry time.
                report.skippedRecentlyFailed += 1
                continue
            }
            let work: Work
            switch source.photo {
            case let .url(url, sendMonicaToken): work = .download(url, sendMonicaToken: sendMonicaToken)
            case .inline(let photo): work = .inline(photo)
            }
            jobs.append(Job(key: source.key, work: work, rank: source.rank, previous: complete ? previous : nil))
        }
        return jobs
    }

    /// When a fetched photo stops being fresh: the server's lifetime capped by the
    /// maximum TTL, or the TTL when the server stated none.
    private func freshUntil(_ fetchedAt: Date, serverLifetime: TimeInterval?) -> Date {
        fetchedAt.addingTimeInterval(serverLifetime.map { min($0, configuration.maxTTL) } ?? configuration.ttl)
    }

    /// Every profile of this run, recorded with its colour (kept once assigned), initials
    /// and sources.
    private func updateProfiles(_ gathered: Gathered, metadata: inout CacheMetadata, started: Date) {
        for (id, item) in gathered.profiles {
            let profile = item.profile
            let stored = metadata.profiles[id]
            let color = profile.colorHex ?? stored?.avatarColorHex ?? AvatarColor.paletteColor(forUserID: id)
            let spec = MonogramSpec(initials: profile.initials, glyph: profile.glyph, background: color, foreground: AvatarColor.textColor(on: color))
            metadata.profiles[id] = CachedProfile(
                displayName: profile.displayName, cachedInitials: profile.glyph == nil ? profile.initials : "",
                glyph: profile.glyph, avatarColorHex: color, textColorHex: spec.foreground,
                photoSource: profile.photo?.key, monogramSource: spec.key, kind: .none,
                cachedImagePath: [:], cachedImageLastAccess: nil, lastSeen: started
            )
        }
    }

    /// Monograms for the profiles of this run that have no cached photo: one job per
    /// distinct monogram not already cached.
    private func planMonograms(metadata: inout CacheMetadata, gathered: Gathered, started: Date, known: [String: RenderedFiles]) -> [Job] {
        var jobs: [Job] = []
        var planned = Set<String>()
        // Ranks are 0..<count, one per profile: placed, not sorted.
        var byRank = [String?](repeating: nil, count: gathered.profiles.count)
        for (id, item) in gathered.profiles where byRank.indices.contains(item.rank) { byRank[item.rank] = id }
        for (rank, id) in byRank.enumerated() {
            guard let id, let profile = metadata.profiles[id] else { continue }
            if let photo = profile.photoSource, metadata.entries[photo] != nil { continue }
            let key = profile.monogramSource
            if let entry = metadata.entries[key], known[entry.contentSHA256] != nil {
                if entry.lastAccess < accessTime(rank, started: started) {
                    metadata.entries[key]?.lastAccess = accessTime(rank, started: started)
                }
                continue
            }
            guard planned.insert(key).inserted else { continue }
            let spec = MonogramSpec(initials: profile.cachedInitials, glyph: profile.glyph,
                                    background: profile.avatarColorHex, foreground: profile.textColorHex)
            jobs.append(Job(key: key, work: .monogram(spec), rank: rank, previous: nil))
        }
        return jobs
    }

    // MARK: Process

    /// What the job stages share: one HTTP client, one decode pool, one writer.
    final class Workers: Sendable {
        let fetcher: HTTPFetcher
        let pool: DecodeWorkerPool
        let writer: RenderWriter

        init(_ configuration: WarmConfiguration) {
            fetcher = HTTPFetcher(
                policy: NetworkPolicy(allowPrivateNetworks: configuration.allowPrivateNetworks, allowedHosts: Set(configuration.allowedHosts)),
                limits: configuration.fetchLimits,
                maxConnectionsPerHost: configuration.maxConnectionsPerHost
            )
            pool = DecodeWorkerPool(threads: configuration.decodeThreads)
            writer = RenderWriter(
                renderer: AvatarRenderer(tiers: configuration.tiers, outputFormat: configuration.outputFormat, quality: configuration.quality,
                                         maxPixels: configuration.maxPixels, crop: configuration.crop,
                                         memoryGate: DecodeMemoryGate(budgetBytes: configuration.maxDecodeMemory)),
                monograms: MonogramRenderer(tiers: configuration.tiers, outputFormat: configuration.monogramFormat, quality: configuration.quality),
                directory: CacheDirectory(root: configuration.cacheDirectory)
            )
        }

        func shutdown() async {
            pool.shutdown()
            await fetcher.shutdown()
        }
    }

    private func process(
        _ jobs: [Job], stage: String, known: [String: RenderedFiles], workers: inout Workers?,
        metadata: inout CacheMetadata, started: Date, report: inout RunReport
    ) async throws {
        guard !jobs.isEmpty, !control.isStopping else { return }
        let shared = workers ?? Workers(configuration)
        workers = shared
        let fetcher = shared.fetcher, pool = shared.pool, writer = shared.writer
        let coordinator = RenderCoordinator(known: known)
        // Downloaded bodies waiting for a decode thread: beyond a couple per thread they
        // only hold memory, so no new download starts while that many wait.
        let backlog = Backlog(limit: max(2, 2 * pool.threadCount))
        try await withThrowingTaskGroup(of: (Job, Result<Outcome, SourceFailure>).self) { group in
            var pending = jobs.makeIterator()
            var done = 0
            func startNext() {
                // Once stopping, nothing new starts; what runs finishes.
                guard !control.isStopping, let job = pending.next() else { return }
                group.addTask {
                    (job, try await self.run(job, fetcher: fetcher, coordinator: coordinator, pool: pool, writer: writer,
                                             backlog: backlog, started: started))
                }
            }
            for _ in 0..<configuration.concurrency { startNext() }
            while let (job, result) = try await group.next() {
                merge(job, result, into: &metadata, started: started, report: &report)
                done += 1
                onProgress?(RunProgress(done: done, total: jobs.count, stage: stage))
                startNext()
            }
        }
    }

    /// One job: get the bytes, then render (or reuse) the files. Failures of the source
    /// are returned; failures of the cache itself are thrown and end the run.
    private func run(
        _ job: Job, fetcher: HTTPFetcher, coordinator: RenderCoordinator,
        pool: DecodeWorkerPool, writer: RenderWriter, backlog: Backlog, started: Date
    ) async throws -> Result<Outcome, SourceFailure> {
        var holdsBody = false
        var photo: FetchedPhoto?
        let contentSHA256: String
        let render: @Sendable () async throws -> RenderedFiles
        switch job.work {
        case let .download(url, sendMonicaToken):
            await backlog.waitForRoom()
            let validators = job.previous.map { Validators(etag: $0.etag, lastModified: $0.lastModified) }
            do {
                switch try await fetcher.fetch(url, credential: sendMonicaToken ? configuration.monica : nil,
                                               validators: validators?.etag == nil && validators?.lastModified == nil ? nil : validators) {
                case .notModified(let lifetime, let etag, let lastModified):
                    // 304: the cached files stay; only the timestamps move.
                    guard var entry = job.previous else { return .failure(SourceFailure(.httpStatus, "HTTP 304 without a cached copy")) }
                    let now = Date()
                    entry.fetchedAt = now
                    entry.freshUntil = freshUntil(now, serverLifetime: lifetime)
                    entry.lastAccess = accessTime(job.rank, started: started)
                    entry.etag = etag ?? entry.etag
                    entry.lastModified = lastModified ?? entry.lastModified
                    return .success(Outcome(entry: entry, bytesDownloaded: 0, rendered: RenderedFiles(entry), notModified: true))
                case .fetched(let fetched):
                    await backlog.add()
                    holdsBody = true
                    photo = fetched
                    contentSHA256 = fetched.sha256
                    render = { try await pool.run { try writer.renderPhoto(fetched.bytes, contentSHA256: fetched.sha256) } }
                }
            } catch {
                return .failure(HTTPFetcher.classify(error))
            }
        case .inline(let inline):
            contentSHA256 = inline.sha256
            render = { try await pool.run { try writer.renderPhoto(inline.bytes, contentSHA256: inline.sha256) } }
        case .monogram(let spec):
            contentSHA256 = SHA256Hex.of(Array(spec.key.utf8))
            render = { try await pool.run { try writer.renderMonogram(spec, contentSHA256: contentSHA256) } }
        }
        let rendered: RenderedFiles
        do {
            rendered = try await coordinator.files(for: contentSHA256, render: render)
        } catch let failure as SourceFailure {
            if holdsBody { await backlog.remove() }
            return .failure(failure)
        } catch {
            if holdsBody { await backlog.remove() }
            throw error
        }
        if holdsBody { await backlog.remove() }
        let largest = configuration.tiers.first.map(String.init) ?? ""
        let isMonogram: Bool
        if case .monogram = job.work { isMonogram = true } else { isMonogram = false }
        var entry = CacheEntry(
            kind: isMonogram ? .monogram : .photo,
            filename: rendered.files[largest]?.filename ?? "",
            lastAccess: accessTime(job.rank, started: started),
            fileSize: rendered.distinctFiles.reduce(0) { $0 + $1.fileSize },
            contentSHA256: contentSHA256,
            sourceBytes: nil, sourceFormat: rendered.format,
            sourceWidth: rendered.sourceWidth, sourceHeight: rendered.sourceHeight,
            fetchedAt: Date(), etag: photo?.etag, lastModified: photo?.lastModified,
            files: rendered.files
        )
        entry.freshUntil = freshUntil(entry.fetchedAt, serverLifetime: photo?.freshnessLifetime)
        switch job.work {
        case .download: entry.sourceBytes = photo?.bytes.count
        case .inline(let inline): entry.sourceBytes = inline.bytes.count
        case .monogram: break
        }
        return .success(Outcome(entry: entry, bytesDownloaded: photo?.bytes.count ?? 0, rendered: rendered))
    }

    private func merge(
        _ job: Job, _ result: Result<Outcome, SourceFailure>,
        into metadata: inout CacheMetadata, started: Date, report: inout RunReport
    ) {
        switch result {
        case .success(let outcome):
            metadata.entries[job.key] = outcome.entry
            metadata.failures[job.key] = nil
            if outcome.notModified {
                report.notModified += 1
                return
            }
            switch job.work {
            case .download:
                report.downloaded += 1
                report.bytesDownloaded += Int64(outcome.bytesDownloaded)
            case .inline: report.inlinePhotos += 1
            case .monogram: report.monogramsRendered += outcome.rendered.renderedNow ? 1 : 0
            }
            if outcome.rendered.renderedNow {
                if case .monogram = job.work {} else { report.decoded += 1 }
                report.filesWritten += outcome.rendered.distinctFiles.count
            } else if case .monogram = job.work {} else {
                report.reusedIdentical += 1
            }
        case .failure(let failure):
            // A failed refresh never deletes a good cached photo.
            let kept = job.previous != nil && metadata.entries[job.key] != nil
            if kept { metadata.entries[job.key]?.lastAccess = accessTime(job.rank, started: started) }
            if case .monogram = job.work {} else {
                let wait = failure.failureClass.isTransient ? min(3600, configuration.failureTTL) : configuration.failureTTL
                metadata.failures[job.key] = FailureRecord(failureClass: failure.failureClass, reason: failure.reason,
                                                           failedAt: Date(), retryAfter: Date().addingTimeInterval(wait))
            }
            let source = job.key.hasPrefix("sha256:") ? "inline photo \(job.key)" : job.key
            report.record(failure, url: source, keptCachedPhoto: kept)
            logger.warning("source failed", metadata: [
                "source": "\(redactedURL(source))", "class": "\(failure.failureClass.rawValue)",
                "reason": "\(failure.reason)", "keptCachedPhoto": "\(kept)",
            ])
        }
    }

    private func tally(_ gathered: Gathered, metadata: CacheMetadata, report: inout RunReport) {
        for id in gathered.profiles.keys {
            switch metadata.profiles[id]?.kind {
            case .photo?: report.profilesWithPhoto += 1
            case .monogram?: report.profilesWithMonogram += 1
            default: report.profilesWithNothing += 1
            }
            if gathered.profiles[id]?.profile.photo == nil { report.profilesWithoutPhoto += 1 }
        }
    }
}

/// Lowercase hex SHA-256.
enum SHA256Hex {
    static func of(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).hexString
    }
}

import Crypto

/// Counts downloaded bodies not yet decoded; `waitForRoom` holds a new download back
/// while `limit` of them wait (memory: each is a whole photo).
actor Backlog {
    let limit: Int
    private var held = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func waitForRoom() async {
        while held >= limit {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    func add() { held += 1 }

    func remove() {
        held -= 1
        if !waiters.isEmpty { waiters.removeFirst().resume() }
    }
}
