import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCacheImaging
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging
import Synchronization

extension WarmPipeline {
    /// Runs the jobs `next` hands out through the job stages, and commits their results to
    /// the index `mergeBatch` at a time, or every `commitInterval` seconds. `settled`
    /// counts the sources the plan settled without a job (for the progress).
    ///
    /// The flow, described once here (`JobScheduler` runs it, `JobStages` are its stages):
    ///
    ///     read (lazily) -> DownloadStage -> RenderStage -> CommitStage
    ///
    /// - download: `requestsInFlight` requests at once over all hosts, a host its own share
    ///   of them (`RequestLimiter`), no new one while the bodies held reach
    ///   `maxDownloadMemory` (`Backlog`); inline photos and monograms skip it;
    /// - render: `concurrency` sources at once (`RenderPlaces`), their decodes on the
    ///   decode threads; a download that finds a place free, with none queued, renders in
    ///   its own task; the others queue (`RenderQueue`); either way through one entry,
    ///   `JobStages.render`;
    /// - commit: a batch in one transaction (`CommitStage`), beside the other stages.
    ///
    /// Sources are read only while the download stage has fewer than `requestsInFlight` +
    /// `lookahead` of them (the rest wait for their host's turn) and fewer than
    /// `concurrency` plus the requests window wait for the render stage (the downloaded
    /// bodies among them held by the backlog): memory is bounded at any size of export,
    /// and a slow host's sources waiting do not keep the others from being read.
    func process(
        stage: String, total: @escaping () -> Int, next: @escaping () throws -> Job?, settled: @escaping () -> Int,
        state: RunState, workers: inout Workers?
    ) async throws -> JobTally {
        guard !control.isStopping, let first = try next() else { return JobTally() }
        let shared = workers ?? Workers(configuration, logger: logger)
        workers = shared
        let limiter = shared.limiter
        // A stop does not wait out a host's hold: its photos waiting fail, asked again first next run.
        control.onStop { limiter.stopHolds(SourceFailure(.rateLimited, "the run stopped (\($0)) while its host held it")) }
        // Downloaded bodies waiting for a decode thread: beyond a couple per thread they
        // only hold memory, so no new download starts while that many wait; small ones
        // (under 256 KB) are counted apart, eight times as many; and they and the bodies
        // still downloading hold at most `maxDownloadMemory` (Backlog).
        let backlog = Backlog(limit: max(2, 2 * shared.pool.threadCount),
                              byteLimit: Int(clamping: configuration.maxDownloadMemory),
                              window: { limiter.currentWindow })
        shared.pool.tellStarving { starving, sequence in Task { await backlog.starving(starving, sequence: sequence) } }
        defer { shared.pool.tellStarving(nil) }
        let scheduler = JobScheduler(
            stages: jobStages(shared, backlog: backlog, state: state),
            feed: JobFeed(stage: stage, first: first, next: next, total: total, settled: settled),
            control: control, limiter: limiter, concurrency: configuration.concurrency,
            downloadWindow: configuration.requestsInFlight + Self.lookahead, onProgress: onProgress)
        var tally = try await scheduler.run()
        tally.requestsResent = shared.fetcher.requestsResent
        tally.peakRequestsInFlight = limiter.peakRequestsInFlight
        tally.hosts = limiter.hostReports()
        tally.peakBytesWaitingForDecode = await backlog.peakWaitingBytes
        return tally
    }

    /// The job stages of one `process`, on the run's shared workers and this backlog.
    private func jobStages(_ shared: Workers, backlog: Backlog, state: RunState) -> JobStages {
        let coordinator = RenderCoordinator(known: { [self] in knownFiles(forContent: $0, state: state) })
        let freshUntil: @Sendable (Date, TimeInterval?) -> Date = { [self] in self.freshUntil($0, serverLifetime: $1) }
        let download = DownloadStage(fetcher: shared.fetcher, limiter: shared.limiter, backlog: backlog, decoders: shared.pool,
                                     control: control, credential: configuration.monica, freshUntil: freshUntil,
                                     started: state.started)
        let render = RenderStage(coordinator: coordinator, writer: shared.writer, backlog: backlog,
                                 largestTier: configuration.tiers.first.map(String.init) ?? "", freshUntil: freshUntil,
                                 started: state.started)
        let commit = CommitStage(state: state, writer: shared.writer, coordinator: coordinator, logger: logger,
                                 retryWait: { [configuration] in configuration.retryWait(after: $0) })
        return JobStages(download: download, renderStage: render, commit: commit, places: RenderPlaces(configuration.concurrency))
    }

    /// Sources read beyond the requests in flight, waiting for their host's turn: enough
    /// that a slow host's sources read in a row leave room for the others' behind them.
    static let lookahead = 1_024
}
