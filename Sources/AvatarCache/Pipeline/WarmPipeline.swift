import Foundation
import Logging

/// A warm-up run, start to end:
///
///     lock cache -> load metadata -> sweep leftovers
///       -> read exports (stream, report bad records)
///       -> plan (one job per distinct URL; fresh within TTL: no request)
///       -> per job, bounded: fetch -> hash -> render once per content (decode pool)
///          -> write files atomically
///       -> merge into metadata -> prune (LRU to budget × trim ratio)
///       -> save metadata atomically -> delete unreferenced files -> report
///
/// Each job catches its own error: one bad source never stops the batch. Only a
/// failure of the cache itself (disk full, read-only) ends the run, and then the
/// previous metadata is left as it was.
public final class WarmPipeline: Sendable {
    public let configuration: WarmConfiguration
    let logger: Logger

    public init(configuration: WarmConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    struct Job: Sendable {
        var url: String
        var previous: CacheEntry?
    }

    struct Outcome: Sendable {
        var entry: CacheEntry
        var bytesDownloaded: Int
        var rendered: RenderedFiles
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
        let lock = try CacheLock.acquire(in: directory)
        defer { lock.release() }

        var metadata = try directory.loadMetadata()
        report.sweptFiles = try directory.sweep(keeping: metadata.referencedFiles).count

        let sources = try readExports(into: &report)
        let (jobs, known) = try plan(sources, metadata: &metadata, started: started, report: &report)
        if !jobs.isEmpty {
            try await process(jobs, known: known, metadata: &metadata, started: started, report: &report)
        }

        let maintenance = CacheMaintenance(directory: directory, logger: logger)
        let pruned = try maintenance.pruneAndSave(metadata, pruner: Pruner(budgetBytes: configuration.budgetBytes, trimRatio: configuration.trimRatio))
        report.evicted = pruned.plan.evicted.count
        report.evictedBytes = pruned.plan.freedBytes
        report.cacheBytes = pruned.cacheBytes
        report.durationSeconds = Date().timeIntervalSince(started)
        return report
    }

    /// Reads every export; returns the distinct photo URLs in order of first appearance.
    private func readExports(into report: inout RunReport) throws -> [String] {
        var sources: [String] = []
        var seen = Set<String>()
        for path in configuration.exports {
            try NexusUsersReader(path: path).read { item in
                switch item {
                case .profile(let profile):
                    report.profiles += 1
                    guard let url = profile.photoURL else {
                        report.profilesWithoutPhoto += 1
                        return
                    }
                    if seen.insert(url).inserted { sources.append(url) }
                case .bad(let bad):
                    report.record(bad)
                    logger.warning("bad record skipped", metadata: ["record": "\(bad)"])
                }
            }
        }
        report.sources = sources.count
        return sources
    }

    /// Splits the sources into fresh ones (touched, no request) and jobs, and indexes
    /// the content already on disk so identical bytes are never decoded twice.
    private func plan(
        _ sources: [String], metadata: inout CacheMetadata, started: Date, report: inout RunReport
    ) throws -> ([Job], [String: RenderedFiles]) {
        let directory = CacheDirectory(root: configuration.cacheDirectory)
        var sizes: [String: Int64] = [:]
        for file in try directory.listFiles() { sizes[file.name] = file.size }
        let tiers = configuration.tiers
        let format = configuration.outputFormat
        // Complete: a file for every tier asked for, in the format asked for, on disk
        // with the recorded size.
        func isComplete(_ entry: CacheEntry) -> Bool {
            tiers.allSatisfy { tier in
                guard let file = entry.files[String(tier)] else { return false }
                return file.filename.hasPrefix(entry.contentSHA256)
                    && file.filename.hasSuffix(".\(format.fileExtension)")
                    && sizes[file.filename] == file.fileSize
            }
        }
        var known: [String: RenderedFiles] = [:]
        for entry in metadata.entries.values where isComplete(entry) {
            known[entry.contentSHA256] = RenderedFiles(entry)
        }
        var jobs: [Job] = []
        for url in sources {
            guard let entry = metadata.entries[url], isComplete(entry) else {
                jobs.append(Job(url: url, previous: metadata.entries[url]))
                continue
            }
            if started.timeIntervalSince(entry.fetchedAt) < configuration.ttl {
                report.fresh += 1
                metadata.entries[url]?.lastAccess = started
            } else {
                jobs.append(Job(url: url, previous: entry))
            }
        }
        return (jobs, known)
    }

    private func process(
        _ jobs: [Job], known: [String: RenderedFiles],
        metadata: inout CacheMetadata, started: Date, report: inout RunReport
    ) async throws {
        let fetcher = HTTPFetcher(
            policy: NetworkPolicy(allowPrivateNetworks: configuration.allowPrivateNetworks),
            limits: configuration.fetchLimits,
            maxConnectionsPerHost: configuration.maxConnectionsPerHost,
            logger: logger
        )
        let pool = DecodeWorkerPool(threads: configuration.decodeThreads)
        let writer = RenderWriter(
            renderer: AvatarRenderer(tiers: configuration.tiers, outputFormat: configuration.outputFormat, quality: configuration.quality, maxPixels: configuration.maxPixels),
            directory: CacheDirectory(root: configuration.cacheDirectory)
        )
        let coordinator = RenderCoordinator(known: known)
        defer { pool.shutdown() }
        do {
            try await withThrowingTaskGroup(of: (Job, Result<Outcome, SourceFailure>).self) { group in
                var pending = jobs.makeIterator()
                func startNext() {
                    guard let job = pending.next() else { return }
                    group.addTask {
                        (job, try await self.run(job, fetcher: fetcher, coordinator: coordinator, pool: pool, writer: writer, started: started))
                    }
                }
                for _ in 0..<configuration.concurrency { startNext() }
                while let (job, result) = try await group.next() {
                    merge(job, result, into: &metadata, started: started, report: &report)
                    startNext()
                }
            }
        } catch {
            await fetcher.shutdown()
            throw error
        }
        await fetcher.shutdown()
    }

    /// One source: fetch, then render (or reuse) its files. Failures of the source are
    /// returned; failures of the cache itself are thrown and end the run.
    private func run(
        _ job: Job, fetcher: HTTPFetcher, coordinator: RenderCoordinator,
        pool: DecodeWorkerPool, writer: RenderWriter, started: Date
    ) async throws -> Result<Outcome, SourceFailure> {
        let photo: FetchedPhoto
        do {
            photo = try await fetcher.fetch(job.url)
        } catch {
            return .failure(HTTPFetcher.classify(error))
        }
        let rendered: RenderedFiles
        do {
            rendered = try await coordinator.files(for: photo.sha256) {
                try await pool.run { try writer.renderAndWrite(photo.bytes, contentSHA256: photo.sha256) }
            }
        } catch let failure as SourceFailure {
            return .failure(failure)
        }
        let largest = configuration.tiers.first.map(String.init) ?? ""
        let entry = CacheEntry(
            filename: rendered.files[largest]?.filename ?? "",
            lastAccess: started,
            fileSize: rendered.distinctFiles.reduce(0) { $0 + $1.fileSize },
            contentSHA256: photo.sha256,
            sourceBytes: photo.bytes.count,
            sourceFormat: rendered.format,
            sourceWidth: rendered.sourceWidth,
            sourceHeight: rendered.sourceHeight,
            fetchedAt: Date(),
            etag: photo.etag,
            lastModified: photo.lastModified,
            files: rendered.files
        )
        return .success(Outcome(entry: entry, bytesDownloaded: photo.bytes.count, rendered: rendered))
    }

    private func merge(
        _ job: Job, _ result: Result<Outcome, SourceFailure>,
        into metadata: inout CacheMetadata, started: Date, report: inout RunReport
    ) {
        switch result {
        case .success(let outcome):
            metadata.entries[job.url] = outcome.entry
            report.downloaded += 1
            report.bytesDownloaded += Int64(outcome.bytesDownloaded)
            if outcome.rendered.renderedNow {
                report.decoded += 1
                report.filesWritten += outcome.rendered.files.count
            } else {
                report.reusedIdentical += 1
            }
        case .failure(let failure):
            // A failed refresh never deletes a good cached photo.
            let kept = job.previous != nil && metadata.entries[job.url] != nil
            if kept { metadata.entries[job.url]?.lastAccess = started }
            report.record(failure, url: job.url, keptCachedPhoto: kept)
            logger.warning("source failed", metadata: [
                "url": "\(redactedURL(job.url))", "class": "\(failure.failureClass.rawValue)",
                "reason": "\(failure.reason)", "keptCachedPhoto": "\(kept)",
            ])
        }
    }
}
