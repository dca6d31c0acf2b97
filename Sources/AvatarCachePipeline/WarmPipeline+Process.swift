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
    /// What the job stages share: one HTTP client, one decode pool, one file pool, one writer.
    final class Workers: Sendable {
        let fetcher: HTTPFetcher
        let pool: DecodeWorkerPool
        let files: DecodeWorkerPool
        let writer: RenderWriter
        /// Requests in flight, over all hosts and per host.
        let limiter: RequestLimiter

        init(_ configuration: WarmConfiguration, logger: Logger) {
            fetcher = HTTPFetcher(
                policy: NetworkPolicy(allowPrivateNetworks: configuration.allowPrivateNetworks, allowedHosts: Set(configuration.allowedHosts)),
                limits: configuration.fetchLimits,
                maxConnectionsPerHost: configuration.maxConnectionsPerHost,
                caFile: configuration.caFile,
                trace: logger
            )
            limiter = RequestLimiter(total: configuration.requestsInFlight, perHost: configuration.requestsPerHost,
                                     perHTTP1Host: configuration.maxConnectionsPerHost)
            let gate = DecodeMemoryGate(budgetBytes: configuration.maxDecodeMemory)
            pool = DecodeWorkerPool(threads: configuration.decodeThreads, gate: gate)
            // The batch's syncfs waits for the disk here, not on a decode thread (the files
            // themselves are written by the decode thread that rendered them).
            files = DecodeWorkerPool(threads: max(2, configuration.decodeThreads), name: "files")
            writer = RenderWriter(
                renderer: AvatarRenderer(tiers: configuration.tiers, outputFormat: configuration.outputFormat, quality: configuration.quality,
                                         maxPixels: configuration.maxPixels, crop: configuration.crop,
                                         memoryGate: gate),
                monograms: MonogramRenderer(tiers: configuration.tiers, outputFormat: configuration.monogramFormat, quality: configuration.quality),
                directory: CacheDirectory(root: configuration.cacheDirectory),
                decoders: pool, files: files
            )
        }

        func shutdown() async {
            pool.shutdown()
            files.shutdown()
            await fetcher.shutdown()
        }
    }

    /// Runs the jobs `next` hands out in two stages with limits of their own, and commits
    /// their results to the index `mergeBatch` at a time, or every `commitInterval` seconds.
    /// `settled` counts the sources the plan settled without a job (for the progress).
    ///
    /// read (lazily) -> download: `requestsInFlight` requests at once over all hosts, a
    /// host its own share of them (`RequestLimiter`), no new one while the bodies held reach
    /// `maxDownloadMemory` (`Backlog`) -> render: `concurrency` sources at once, their
    /// decodes on the decode threads -> commit. Inline photos and monograms go straight to
    /// the render stage. Sources are read only while the download stage has fewer than
    /// `requestsInFlight` + `lookahead` of them (the rest wait for their host's turn) and
    /// fewer than `concurrency` plus the requests window wait for the render stage (the
    /// downloaded bodies among them held by the backlog): memory is bounded at any size of
    /// export, and a slow host's sources waiting do not keep the others from being read.
    func process(
        stage: String, total: Int, next: () throws -> Job?, settled: () -> Int,
        state: RunState, workers: inout Workers?
    ) async throws -> JobTally {
        guard !control.isStopping, let first = try next() else { return JobTally() }
        let shared = workers ?? Workers(configuration, logger: logger)
        workers = shared
        let fetcher = shared.fetcher, writer = shared.writer, limiter = shared.limiter
        // A stop does not wait out a host's hold: its photos waiting fail, asked again first next run.
        control.onStop { limiter.stopHolds(SourceFailure(.rateLimited, "the run stopped (\($0)) while its host held it")) }
        let coordinator = RenderCoordinator(known: { [self] in knownFiles(forContent: $0, state: state) })
        // Downloaded bodies waiting for a decode thread: beyond a couple per thread they
        // only hold memory, so no new download starts while that many wait; small ones
        // (under 256 KB) are counted apart, eight times as many; and they and the bodies
        // still downloading hold at most `maxDownloadMemory` (Backlog).
        let backlog = Backlog(limit: max(2, 2 * shared.pool.threadCount),
                              byteLimit: Int(clamping: configuration.maxDownloadMemory),
                              window: { limiter.currentWindow })
        shared.pool.tellStarving { starving, sequence in Task { await backlog.starving(starving, sequence: sequence) } }
        defer { shared.pool.tellStarving(nil) }
        let downloadWindow = configuration.requestsInFlight + Self.lookahead
        var finished: [(Job, Result<Outcome, SourceFailure>)] = []
        let committer = CommitStage(state: state, writer: writer, coordinator: coordinator, logger: logger,
                                    retryWait: { [configuration] in configuration.retryWait(after: $0) })
        var tally = JobTally()
        /// The results finished so far, committed in one transaction.
        func commit() async throws {
            guard !finished.isEmpty else { return }
            let batch = finished
            finished.removeAll(keepingCapacity: true)
            tally.add(try await committer.commit(batch))
        }
        // A download's end, a job's end, or the commit clock: results wait at most
        // `commitInterval` for their commit, even while the jobs still running take minutes.
        enum Event { case downloaded(Downloaded), finished(Job, Result<Outcome, SourceFailure>), commitDue }
        // The render stage's places (`concurrency`): a download that finds one free, with
        // nothing queued for the stage, renders in its own task (one task a photo, no
        // hand-back to this loop between its stages); the others queue here.
        let renderPlaces = RenderPlaces(configuration.concurrency)
        try await withThrowingTaskGroup(of: Event.self) { group in
            var pendingFirst: Job? = first
            var done = 0, downloading = 0, rendering = 0
            var exhausted = false
            /// Past their download (or needing none), waiting for the render stage; a taken
            /// one's place is emptied at once (its body must not outlive its render).
            var toRender: [Downloaded?] = [], toRenderHead = 0
            var clockRunning = false
            func readMore() throws {
                // Once stopping, nothing new starts; what runs finishes.
                // Bodies downloaded and waiting for the render stage are bounded by the
                // backlog (their count and bytes); beside them, `concurrency` waiting without
                // a download (inline photos, monograms). Held to `concurrency` alone, a round
                // trip's answers arriving together stopped the reading, and so the next
                // requests, until all but a few were rendered.
                while !exhausted, !control.isStopping, downloading < downloadWindow,
                      toRender.count - toRenderHead < configuration.concurrency + limiter.currentWindow {
                    guard let job = try pendingFirst.take() ?? next() else {
                        exhausted = true
                        return
                    }
                    guard case let .download(url, sendMonicaToken) = job.work else {
                        toRender.append(Downloaded(job: job))
                        continue
                    }
                    downloading += 1
                    group.addTask {
                        var item = await self.download(job, url: url, sendMonicaToken: sendMonicaToken, fetcher: fetcher,
                                                       limiter: limiter, backlog: backlog, pool: shared.pool,
                                                       started: state.started)
                        if item.result == nil, !item.notStarted, renderPlaces.takeIfNoneQueued() {
                            defer { renderPlaces.release() }
                            item.result = try await self.render(item, coordinator: coordinator, writer: writer,
                                                                backlog: backlog, started: state.started)
                            item.photo = nil
                            item.ticket = nil
                        }
                        return .downloaded(item)
                    }
                }
            }
            func startRenders() {
                defer { renderPlaces.queued(toRender.count - toRenderHead) }
                while toRenderHead < toRender.count, toRender[toRenderHead] != nil, renderPlaces.take() {
                    let item = toRender[toRenderHead]!
                    toRender[toRenderHead] = nil
                    toRenderHead += 1
                    if toRenderHead == toRender.count {
                        toRender.removeAll(keepingCapacity: true)
                        toRenderHead = 0
                    } else if toRenderHead >= 64 && toRenderHead * 2 >= toRender.count {
                        toRender.removeFirst(toRenderHead)
                        toRenderHead = 0
                    }
                    rendering += 1
                    group.addTask {
                        defer { renderPlaces.release() }
                        return .finished(item.job, try await self.render(item, coordinator: coordinator, writer: writer,
                                                                         backlog: backlog, started: state.started))
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
                onProgress?(RunProgress(done: done + settled(), total: max(total, done + settled()), stage: stage))
            }
            try readMore()
            startRenders()
            while let event = try await group.next() {
                switch event {
                case .commitDue:
                    clockRunning = false
                    try await commit()
                case let .downloaded(item):
                    downloading -= 1
                    if item.notStarted {
                        // Read ahead, its turn came after the run began to stop: left for the next run.
                    } else if let result = item.result {
                        finished.append((item.job, result))
                        progressed()
                    } else {
                        toRender.append(item)
                        renderPlaces.queued(toRender.count - toRenderHead)
                    }
                case let .finished(job, result):
                    rendering -= 1
                    finished.append((job, result))
                    progressed()
                }
                if finished.count >= Self.mergeBatch {
                    try await commit()
                }
                try readMore()
                startRenders()
                // The last job is done: the clock is not waited for (its sleep ends at once).
                if downloading + rendering == 0 && clockRunning { group.cancelAll() }
                startClock()
            }
        }
        try await commit()
        tally.requestsResent = fetcher.requestsResent
        tally.peakRequestsInFlight = limiter.peakRequestsInFlight
        tally.hosts = limiter.hostReports()
        tally.peakBytesWaitingForDecode = await backlog.peakWaitingBytes
        return tally
    }

    /// The render stage's places, taken by the loop for the sources queued for it and by a
    /// download task for its own body when nothing is queued (so the queued go first).
    final class RenderPlaces: Sendable {
        private let places: Places
        private let waiting = Atomic<Int>(0)

        init(_ limit: Int) { places = Places(limit) }

        func take() -> Bool { places.take() }

        func takeIfNoneQueued() -> Bool { waiting.load(ordering: .acquiring) == 0 && places.take() }

        func release() { places.release() }

        /// How many wait in the loop's queue.
        func queued(_ count: Int) { waiting.store(count, ordering: .releasing) }
    }

    /// Sources read beyond the requests in flight, waiting for their host's turn: enough
    /// that a slow host's sources read in a row leave room for the others' behind them.
    static let lookahead = 1_024

    /// A job past its download stage: the body to render (its place in the backlog with
    /// it), or already its result (a failure, a 304); inline photos and monograms need none.
    struct Downloaded: Sendable {
        var job: Job
        var ticket: Backlog.Ticket?
        var photo: FetchedPhoto?
        var result: Result<Outcome, SourceFailure>?
        var fetchSeconds: Double = 0
        /// Its turn came once the run was stopping: no request was sent, nothing is recorded.
        var notStarted = false
    }

    /// The download stage of one job: a slot of the requests in flight for its host, a
    /// place in the backlog, then the bytes.
    private func download(
        _ job: Job, url: String, sendMonicaToken: Bool, fetcher: HTTPFetcher,
        limiter: RequestLimiter, backlog: Backlog, pool: DecodeWorkerPool, started: Date
    ) async -> Downloaded {
        let slot = RequestSlot(limiter, for: url)
        // Its host's limits past --max-host-wait: failed without a request.
        if let outOfBudget = await slot.acquire() {
            return control.isStopping ? Downloaded(job: job, notStarted: true) : Downloaded(job: job, result: .failure(outOfBudget))
        }
        let ticket = await backlog.admit()
        // Once stopping, nothing new starts (the sources read ahead wait above); what runs finishes.
        guard !control.isStopping else {
            slot.release()
            await backlog.release(ticket)
            return Downloaded(job: job, notStarted: true)
        }
        let jobStarted = DispatchTime.now().uptimeNanoseconds
        let validators = job.previous.map { Validators(etag: $0.etag, lastModified: $0.lastModified) }
        let fetchedResult: FetchResult
        do {
            fetchedResult = try await fetcher.fetch(
                url, credential: sendMonicaToken ? configuration.monica : nil,
                validators: validators?.etag == nil && validators?.lastModified == nil ? nil : validators,
                slot: slot, sized: { await backlog.sized(ticket, bytes: $0) })
        } catch {
            slot.release()
            await backlog.release(ticket)
            return Downloaded(job: job, result: .failure(HTTPFetcher.classify(error)))
        }
        slot.release()
        let fetchSeconds = Self.seconds(since: jobStarted)
        switch fetchedResult {
        case .notModified(let lifetime, let etag, let lastModified):
            await backlog.release(ticket)
            // 304: the cached files stay; only the timestamps move.
            guard var entry = job.previous else {
                return Downloaded(job: job, result: .failure(SourceFailure(.httpStatus, "HTTP 304 without a cached copy")))
            }
            let now = Date()
            entry.fetchedAt = now
            entry.freshUntil = freshUntil(now, serverLifetime: lifetime)
            entry.lastAccess = max(entry.lastAccess, AccessTime.of(rank: job.rank, runStartedAt: started))
            entry.etag = etag ?? entry.etag
            entry.lastModified = lastModified ?? entry.lastModified
            return Downloaded(job: job, result: .success(Outcome(entry: entry, bytesDownloaded: 0, rendered: RenderedFiles(entry),
                                                                 notModified: true, fetchSeconds: fetchSeconds)))
        case .fetched(let fetched):
            await backlog.downloaded(ticket, bytes: fetched.bytes.count)
            // As many requests in flight as keep the decode threads fed (RequestLimiter.resize).
            if let decodeSeconds = pool.meanJobSeconds {
                limiter.resize(afterRequestOf: fetchSeconds, decodeSeconds: decodeSeconds, threads: pool.threadCount)
            }
            return Downloaded(job: job, ticket: ticket, photo: fetched, fetchSeconds: fetchSeconds)
        }
    }

    private static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// The render stage of one job: render (or reuse) the files. Failures of the source
    /// are returned; failures of the cache itself are thrown and end the run.
    private func render(
        _ item: Downloaded, coordinator: RenderCoordinator, writer: RenderWriter, backlog: Backlog, started: Date
    ) async throws -> Result<Outcome, SourceFailure> {
        let job = item.job, photo = item.photo
        let contentSHA256: String
        let render: @Sendable () async throws -> RenderedFiles
        switch job.work {
        case .download:
            guard let fetched = photo else { return .failure(SourceFailure(.network, "no body")) }
            contentSHA256 = fetched.sha256
            render = { try await writer.renderPhoto(fetched.bytes, contentSHA256: fetched.sha256) }
        case .inline(let inline):
            contentSHA256 = inline.sha256
            render = { try await writer.renderPhoto(inline.bytes, contentSHA256: inline.sha256, inline: true) }
        case .monogram(let spec):
            contentSHA256 = SHA256Hex.of(Array(spec.key.utf8))
            render = { try await writer.renderMonogram(spec, contentSHA256: contentSHA256) }
        }
        let renderStarted = DispatchTime.now().uptimeNanoseconds
        // Rendered, or not: either way the body has left the backlog.
        let outcome: Result<RenderedFiles, Error>
        do {
            outcome = .success(try await coordinator.files(for: contentSHA256, render: render))
        } catch {
            outcome = .failure(error)
        }
        if let ticket = item.ticket { await backlog.release(ticket) }
        let rendered: RenderedFiles
        do {
            rendered = try outcome.get()
        } catch let failure as SourceFailure {
            return .failure(failure)
        }
        let largest = configuration.tiers.first.map(String.init) ?? ""
        // A monogram's placeholder is its colour, whoever drew its files.
        var placeholder = rendered.placeholder
        if case .monogram(let spec) = job.work { placeholder = Placeholder(color: spec.background) }
        var entry = CacheEntry(
            kind: job.work.isMonogram ? .monogram : .photo,
            filename: rendered.files[largest]?.filename ?? "",
            lastAccess: AccessTime.of(rank: job.rank, runStartedAt: started),
            fileSize: rendered.distinctFiles.reduce(0) { $0 + $1.fileSize },
            contentSHA256: contentSHA256,
            sourceBytes: nil, sourceFormat: rendered.format,
            sourceWidth: rendered.sourceWidth, sourceHeight: rendered.sourceHeight,
            fetchedAt: Date(), etag: photo?.etag, lastModified: photo?.lastModified,
            files: rendered.files, placeholder: placeholder
        )
        entry.freshUntil = freshUntil(entry.fetchedAt, serverLifetime: photo?.freshnessLifetime)
        switch job.work {
        case .download: entry.sourceBytes = photo?.bytes.count
        case .inline(let inline): entry.sourceBytes = inline.bytes.count
        case .monogram: break
        }
        return .success(Outcome(entry: entry, bytesDownloaded: photo?.bytes.count ?? 0, rendered: rendered,
                                fetchSeconds: item.fetchSeconds, renderSeconds: Self.seconds(since: renderStarted)))
    }
}
