import AvatarCacheConfiguration
import AvatarCacheExports
import AvatarCacheImaging
import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheStore
import Foundation
import Synchronization
import Logging

/// A warm-up run, start to end: lock, open the index, read the exports into it, plan and
/// process the photos, draw the monograms, prune, write `metadata.json`, report. The flow
/// is described once, stage by stage, in docs/architecture.md ("The flow of a run").
///
/// Memory stays flat in the number of profiles: records, plans and results pass through
/// the index a batch at a time. Each job catches its own error: one bad source never
/// stops the batch. Only a failure of the cache itself (disk full, read-only) ends the
/// run, and then what was committed stays consistent.
public final class WarmPipeline: Sendable {
    public let configuration: WarmConfiguration
    let logger: Logger
    let control: RunControl
    let onProgress: (@Sendable (RunProgress) -> Void)?

    /// Records written to the index per transaction while reading exports.
    /// Job results committed per transaction.
    static let mergeBatch = 256
    /// Results are committed at least this often (seconds), however few: a run killed
    /// mid-way (a first run on slow servers, say) keeps all but its last seconds of work.
    static let commitInterval: Double = 2

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

        var isMonogram: Bool {
            if case .monogram = self { return true }
            return false
        }
    }

    struct Job: Sendable {
        var key: String
        var work: Work
        var rank: Int
        /// The cached entry, complete on disk, that a failed refresh keeps.
        var previous: CacheEntry?
    }

    struct Outcome: Sendable {
        var entry: CacheEntry
        var bytesDownloaded: Int
        var rendered: RenderedFiles
        /// The server answered 304: nothing was downloaded or written.
        var notModified = false
        /// Getting the bytes (download, or none), and rendering or finding the files.
        var fetchSeconds = 0.0
        var renderSeconds = 0.0
    }

    /// What one run shares between its stages: immutable but for two sets behind locks.
    final class RunState: Sendable {
        /// What the run asks of the index.
        let store: RunStore
        let started: Date
        /// Cache files on disk with their sizes: the listing at the start, plus the files
        /// this run committed. Bounded by the budget (the cache's own files).
        private let sizes: Mutex<[String: Int64]>
        /// The contents (SHA-256) those files were made from, the part of their names
        /// before the tier: a content without a file has no complete entry to reuse, and
        /// needs no question to the index (`hasFiles`).
        private let contents: Mutex<Set<Substring>>
        /// Photos found on disk unreferenced (a run killed before it committed them),
        /// by content: re-used instead of decoded again.
        let recovered: [String: RenderedFiles]
        /// metadata.json written during the run.
        let metadata: MetadataRefresh
        /// Files the committed entries replaced, to delete once metadata.json no longer
        /// names them (the session's, at the end).
        private let replaced = Mutex<Set<String>>([])

        init(store: RunStore, started: Date, sizes: [String: Int64], recovered: [String: RenderedFiles], metadata: MetadataRefresh) {
            self.store = store
            self.started = started
            self.sizes = Mutex(sizes)
            contents = Mutex(Set(sizes.keys.map(Self.content(ofFile:))))
            self.recovered = recovered
            self.metadata = metadata
        }

        func size(of name: String) -> Int64? { sizes.withLock { $0[name] } }

        func add(_ files: some Sequence<CacheFile>) {
            let files = Array(files)
            sizes.withLock { sizes in for file in files { sizes[file.filename] = file.fileSize } }
            contents.withLock { contents in for file in files { contents.insert(Self.content(ofFile: file.filename)) } }
        }

        /// Whether a cache file made from this content is on disk (or committed by this run).
        func hasFiles(forContent content: String) -> Bool { contents.withLock { $0.contains(content.prefix(64)) } }

        /// A file's name up to the length of a content hash (64 hex digits): what
        /// `isComplete` asks of its names (that they start with the content's hash).
        private static func content(ofFile name: String) -> Substring { name.prefix(64) }

        func replaced(_ files: [String]) { replaced.withLock { $0.formUnion(files) } }

        /// The files replaced so far, handed over once.
        func takeReplaced() -> Set<String> {
            replaced.withLock { files in
                defer { files.removeAll() }
                return files
            }
        }
    }

    public func run() async throws -> RunReport {
        try configuration.validate()
        let formats = try exportFormats()
        try Vips.initialise()
        let started = Date()
        let directory = CacheDirectory(root: configuration.cacheDirectory)
        var report = RunReport(startedAt: started, exports: configuration.exports,
                               cacheDirectory: directory.root.path, budgetBytes: configuration.pruner.budgetBytes)
        report.shard = configuration.shard?.description
        var stages = StageTimer(logger: logger)
        let session = try CacheStore.openRun(directory, wait: configuration.lockWait, logger: logger)
        defer { session.close() }
        let (state, orphans, swept) = try begin(session, in: directory, at: started)
        report.sweptFiles = swept
        stages.done("open")
        do {
            report.add(try readStage(state).run(Array(zip(configuration.exports, formats))))
        } catch let error as ExportError {
            // Only the index was written, in transactions: nothing for the marker to explain.
            if !session.previousRunInterrupted { try? directory.markRunFinished() }
            throw error
        }
        stages.done("read")
        // One HTTP client, decode pool and writer for both stages, made when a job needs them.
        var workers: Workers?
        do {
            let done = try await processJobs(state: state, sources: report.sources, workers: &workers, stages: &stages)
            report.add(done.jobs)
            report.fresh += done.fresh
            report.skippedRecentlyFailed += done.skippedRecentlyFailed
            report.profilesWithoutPhoto = done.plan.profilesWithoutPhoto
            let finished = try finish(session, in: directory, orphans: orphans, monograms: done.plan, state: state, stages: &stages)
            report.interrupted = finished.interrupted
            report.evicted = finished.evicted
            report.evictedBytes = finished.evictedBytes
            report.cacheBytes = finished.cacheBytes
            (report.budgetBytes, report.budgetOrigin) = (finished.budget.budgetBytes, finished.budget.budgetOrigin)
            (report.profilesWithPhoto, report.profilesWithMonogram, report.profilesWithNothing) = finished.shown
        } catch {
            await workers?.shutdown()
            throw error
        }
        report.durationSeconds = Date().timeIntervalSince(started)
        return report
    }

    /// The read stage of this run: how to read the exports, where to record them.
    private func readStage(_ state: RunState) -> ReadStage {
        ReadStage(limits: configuration.readerLimits, fieldMap: configuration.fieldMap,
                  shard: configuration.shard, store: state.store, metadata: state.metadata, started: state.started,
                  logger: logger)
    }

    /// Each export's format, once every export is found there and readable, before the
    /// cache is touched: a mistyped path leaves no lock, marker or directory behind.
    private func exportFormats() throws -> [ExportFormat] {
        try configuration.exportFormatsChecked()
    }

    /// The run begun in the index, and the cache directory listed once for the run (the
    /// directory is ours while the lock is held): only temporary leftovers are swept now;
    /// unreferenced cache files (orphans) may be re-used (a run killed before committing
    /// them) and are swept at the end.
    private func begin(_ session: CacheSession, in directory: CacheDirectory, at started: Date)
        throws -> (RunState, orphans: Set<String>, swept: Int) {
        let store = session.store
        // A first warm's metadata.json exists from here on; a killed run's is written again.
        let metadata = MetadataRefresh(directory: directory, store: store, started: started)
        try metadata.begin(previousRunInterrupted: session.previousRunInterrupted)
        try store.beginRun(at: started, shard: configuration.shard?.description, decodeSizes: configuration.pointSizes)
        let referenced = try store.referencedFileNames()
        var listing = try directory.listFiles()
        let swept = Set(try directory.sweep(keeping: referenced, leftoversOnly: true, in: listing))
        if !swept.isEmpty { listing.removeAll { swept.contains($0.name) } }
        let orphans = Set(listing.map(\.name).filter { CacheDirectory.isCacheFileName($0) && !referenced.contains($0) })
        let recovered = recoverOrphans(orphans, directory: directory)
        // A killed run's files were renamed into place without a flush of their own: made
        // durable before a commit of this run can name them, as this run's own are.
        if !recovered.isEmpty { try directory.syncFilesystem() }
        let state = RunState(store: store, started: started,
                             sizes: Dictionary(listing.map { ($0.name, $0.size) }, uniquingKeysWith: { a, _ in a }),
                             recovered: recovered, metadata: metadata)
        return (state, orphans, swept.count)
    }

    /// What the job stages did: their tally, the sources the plan found fresh or failed
    /// lately, and the plan of monograms (for what each profile shows).
    struct JobsOutcome {
        var jobs = JobTally()
        var fresh = 0
        var skippedRecentlyFailed = 0
        var plan: MonogramPlan
    }

    /// The photos' jobs (`sources` of them, for the progress), with the monograms of the
    /// profiles that have no photo (known already: drawn while the first requests wait
    /// for their answers, which far away take four round trips); then the monograms of
    /// the profiles whose photo failed.
    private func processJobs(state: RunState, sources: Int, workers: inout Workers?,
                             stages: inout StageTimer) async throws -> JobsOutcome {
        let photos = PhotoJobFeed(pipeline: self, state: state, alongside: { [self] in try planMonograms(state: state, photoless: true).jobs })
        var jobs = try await process(stage: "photos", total: { sources + photos.alongsideCount }, next: { try photos.next() },
                                     settled: { photos.settled }, state: state, workers: &workers)
        try state.store.markSourcesAccessed(at: state.started)
        stages.done("photos", pool: workers?.pool)
        Vips.returnFreedMemory()
        var monograms = try planMonograms(state: state)
        stages.done("plan monograms")
        let drawing = monograms.jobs.count
        jobs.add(try await process(stage: "monograms", total: { drawing }, next: { monograms.jobs.popLast() }, settled: { 0 },
                                   state: state, workers: &workers))
        stages.done("monograms", pool: workers?.pool)
        await workers?.shutdown()
        stages.done("shutdown")
        return JobsOutcome(jobs: jobs, fresh: photos.fresh, skippedRecentlyFailed: photos.skippedRecentlyFailed, plan: monograms)
    }

    /// What the run's end did: the prune's figures, and what each profile shows after it.
    struct Finished {
        var interrupted: String?
        var evicted: Int
        var evictedBytes: Int64
        var cacheBytes: Int64
        /// The budget pruned to (given, else the cache's own).
        var budget: Pruner
        var shown: (photo: Int, monogram: Int, nothing: Int)
    }

    /// The prune, `metadata.json` and the run marked finished; then what each profile shows.
    private func finish(_ session: CacheSession, in directory: CacheDirectory, orphans: Set<String>, monograms: MonogramPlan,
                        state: RunState, stages: inout StageTimer) throws -> Finished {
        let interrupted = control.stopReason
        if let interrupted {
            logger.notice("stopped early: what is done is saved", metadata: ["reason": "\(interrupted)"])
        }
        session.pendingDeletes.formUnion(state.takeReplaced())
        let outcome = try session.finish(pruner: configuration.pruner,
                                         entriesChanged: try state.metadata.finalWriteNeeded, orphans: orphans)
        try state.metadata.finished(written: outcome.documentWritten)
        try directory.markRunFinished()
        stages.done("prune and save")
        // What each profile shows once the prune is done: profiles whose photo the prune
        // evicted show their monogram, if it is cached.
        let shown = try state.store.showing(monograms: monograms.groups.map { ($0.key, $0.value.profiles) },
                                            photos: monograms.profilesShowingPhoto, evicted: outcome.plan.evicted)
        stages.done("tally")
        return Finished(interrupted: interrupted, evicted: outcome.plan.evicted.count, evictedBytes: outcome.plan.freedBytes,
                        cacheBytes: outcome.cacheBytes, budget: outcome.pruner, shown: shown)
    }

    /// When a fetched photo stops being fresh: the server's lifetime capped by the
    /// maximum TTL, or the TTL when the server stated none.
    func freshUntil(_ fetchedAt: Date, serverLifetime: TimeInterval?) -> Date {
        fetchedAt.addingTimeInterval(serverLifetime.map { min($0, configuration.maxTTL) } ?? configuration.ttl)
    }
}

/// Each stage's wall time, the process's CPU time in it, and so the cores it kept busy,
/// logged at debug level as the stage ends. For the job stages, also the seconds the
/// decode threads waited (added up over them): for work (downloads behind) and for
/// decode memory (big decodes queued).
struct StageTimer {
    let logger: Logger
    private var started = Date()
    private var cpu = StageTimer.processCPUSeconds()
    private var idle: (noWork: Double, noMemory: Double) = (0, 0)

    init(logger: Logger) {
        self.logger = logger
    }

    /// Logs the stage that ends now, and starts the next.
    mutating func done(_ stage: String, pool: DecodeWorkerPool? = nil) {
        let wall = Date().timeIntervalSince(started), cpuSeconds = Self.processCPUSeconds() - cpu
        var metadata: Logger.Metadata = [
            "stage": "\(stage)", "seconds": Self.milliRounded(wall), "cpuSeconds": Self.milliRounded(cpuSeconds),
            "cores": .stringConvertible(wall > 0 ? (cpuSeconds / wall * 100).rounded() / 100 : 0),
        ]
        if let poolIdle = pool?.idleSeconds {
            metadata["decodeThreadsIdleNoWork"] = Self.milliRounded(poolIdle.noWork - idle.noWork)
            metadata["decodeThreadsIdleNoMemory"] = Self.milliRounded(poolIdle.noMemory - idle.noMemory)
            idle = poolIdle
        }
        logger.debug("stage done", metadata: metadata)
        started = Date()
        cpu = Self.processCPUSeconds()
    }

    private static func milliRounded(_ value: Double) -> Logger.MetadataValue {
        .stringConvertible((value * 1000).rounded() / 1000)
    }

    /// User and system CPU time of the whole process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
