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
    /// The flow, written once here:
    ///
    ///     read (lazily) -> DownloadStage -> RenderStage -> CommitStage
    ///
    /// - download: `requestsInFlight` requests at once over all hosts, a host its own share
    ///   of them (`RequestLimiter`), no new one while the bodies held reach
    ///   `maxDownloadMemory` (`Backlog`); inline photos and monograms skip it;
    /// - render: `concurrency` sources at once (`RenderPlaces`), their decodes on the
    ///   decode threads; a download that finds a place free, with none queued, renders in
    ///   its own task; the others queue (`RenderQueue`);
    /// - commit: a batch in one transaction (`CommitStage`).
    ///
    /// Sources are read only while the download stage has fewer than `requestsInFlight` +
    /// `lookahead` of them (the rest wait for their host's turn) and fewer than
    /// `concurrency` plus the requests window wait for the render stage (the downloaded
    /// bodies among them held by the backlog): memory is bounded at any size of export,
    /// and a slow host's sources waiting do not keep the others from being read.
    func process(
        stage: String, total: () -> Int, next: () throws -> Job?, settled: () -> Int,
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
        let coordinator = RenderCoordinator(known: { [self] in knownFiles(forContent: $0, state: state) })
        let freshUntil: @Sendable (Date, TimeInterval?) -> Date = { [self] in self.freshUntil($0, serverLifetime: $1) }
        // The stages.
        let download = DownloadStage(fetcher: shared.fetcher, limiter: limiter, backlog: backlog, decoders: shared.pool,
                                     control: control, credential: configuration.monica, freshUntil: freshUntil,
                                     started: state.started)
        let render = RenderStage(coordinator: coordinator, writer: shared.writer, backlog: backlog,
                                 largestTier: configuration.tiers.first.map(String.init) ?? "", freshUntil: freshUntil,
                                 started: state.started)
        let committer = CommitStage(state: state, writer: shared.writer, coordinator: coordinator, logger: logger,
                                    retryWait: { [configuration] in configuration.retryWait(after: $0) })

        let downloadWindow = configuration.requestsInFlight + Self.lookahead
        let renderPlaces = RenderPlaces(configuration.concurrency)
        var toRender = RenderQueue()
        var finished: [CommitStage.Finished] = []
        var tally = JobTally()
        /// The results finished so far, committed in one transaction.
        func commit() async throws {
            guard !finished.isEmpty else { return }
            let batch = finished
            finished.removeAll(keepingCapacity: true)
            tally.add(try await committer.commit(batch))
        }
        // A download's end, a job's end, a commit's end, or the commit clock: results wait
        // at most `commitInterval` for their commit, even while the jobs still running take
        // minutes. A commit runs beside the stages (one at a time): while it waits for the
        // disk, downloads and renders go on.
        enum Event {
            case downloaded(DownloadStage.Output), finished(Job, Result<Outcome, SourceFailure>), commitDue, committed(JobTally)
        }
        try await withThrowingTaskGroup(of: Event.self) { group in
            var pendingFirst: Job? = first
            var done = 0, downloading = 0, rendering = 0
            var exhausted = false
            var clockRunning = false
            var committing = false
            /// Commits the results finished so far beside the stages, unless a commit runs.
            func commitBeside() {
                guard !committing, !finished.isEmpty else { return }
                committing = true
                let batch = finished
                finished.removeAll(keepingCapacity: true)
                group.addTask { .committed(try await committer.commit(batch)) }
            }
            /// Reads jobs while the stages have room: a download starts at once, the rest
            /// queue for the render stage.
            func readMore() throws {
                // Once stopping, nothing new starts; what runs finishes. Bodies downloaded
                // and waiting for the render stage are bounded by the backlog (their count
                // and bytes); beside them, `concurrency` waiting without a download (inline
                // photos, monograms). Held to `concurrency` alone, a round trip's answers
                // arriving together stopped the reading, and so the next requests, until
                // all but a few were rendered.
                while !exhausted, !control.isStopping, downloading < downloadWindow,
                      toRender.count < configuration.concurrency + limiter.currentWindow {
                    guard let job = try pendingFirst.take() ?? next() else {
                        exhausted = true
                        return
                    }
                    guard case let .download(url, sendMonicaToken) = job.work else {
                        toRender.append(DownloadStage.Output(job: job))
                        continue
                    }
                    downloading += 1
                    group.addTask {
                        var item = await download.run(job, url: url, sendMonicaToken: sendMonicaToken)
                        if item.result == nil, !item.notStarted, renderPlaces.takeIfNoneQueued() {
                            defer { renderPlaces.release() }
                            item.result = try await render.run(item)
                            item.photo = nil
                            item.ticket = nil
                        }
                        return .downloaded(item)
                    }
                }
            }
            /// Starts the queued renders the render stage has places for.
            func startRenders() {
                defer { renderPlaces.queued(toRender.count) }
                while !toRender.isEmpty, renderPlaces.take() {
                    let item = toRender.removeFirst()
                    rendering += 1
                    group.addTask {
                        defer { renderPlaces.release() }
                        return .finished(item.job, try await render.run(item))
                    }
                }
            }
            func startClock() {
                guard !clockRunning, downloading + rendering > 0, !finished.isEmpty else { return }
                clockRunning = true
                group.addTask {
                    try? await Task.sleep(nanoseconds: UInt64(Self.commitInterval * 1e9))
                    return .commitDue
                }
            }
            func progressed() {
                done += 1
                onProgress?(RunProgress(done: done + settled(), total: max(total(), done + settled()), stage: stage))
            }
            try readMore()
            startRenders()
            while let event = try await group.next() {
                switch event {
                case .commitDue:
                    clockRunning = false
                    // With every job done the clock was cut short: the last commit follows the loop.
                    if downloading + rendering > 0 { commitBeside() }
                case let .committed(committed):
                    committing = false
                    tally.add(committed)
                case let .downloaded(item):
                    downloading -= 1
                    if item.notStarted {
                        // Read ahead, its turn came after the run began to stop: left for the next run.
                    } else if let result = item.result {
                        finished.append((item.job, result))
                        progressed()
                    } else {
                        toRender.append(item)
                        renderPlaces.queued(toRender.count)
                    }
                case let .finished(job, result):
                    rendering -= 1
                    finished.append((job, result))
                    progressed()
                }
                if finished.count >= Self.mergeBatch { commitBeside() }
                try readMore()
                startRenders()
                // The last job is done: the clock is not waited for (its sleep ends at once);
                // a commit under way is (cancelling it would fail its writes).
                if downloading + rendering == 0 && clockRunning && !committing { group.cancelAll() }
                startClock()
            }
        }
        try await commit()
        tally.requestsResent = shared.fetcher.requestsResent
        tally.peakRequestsInFlight = limiter.peakRequestsInFlight
        tally.hosts = limiter.hostReports()
        tally.peakBytesWaitingForDecode = await backlog.peakWaitingBytes
        return tally
    }

    /// Sources read beyond the requests in flight, waiting for their host's turn: enough
    /// that a slow host's sources read in a row leave room for the others' behind them.
    static let lookahead = 1_024
}
