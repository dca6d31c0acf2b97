import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCacheImaging
import AvatarCacheIndex
import AvatarCacheLookup
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging

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
            // Each thread mostly waits for the disk; two keep an fsync in flight while the
            // next file is written, and more than the decoders would only queue on the journal.
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
    /// fewer than `concurrency` wait for the render stage: memory is bounded at any size of
    /// export, and a slow host's sources waiting do not keep the others from being read.
    func process(
        stage: String, total: Int, next: () throws -> Job?, settled: () -> Int,
        state: RunState, workers: inout Workers?, report: inout RunReport
    ) async throws {
        guard !control.isStopping, let first = try next() else { return }
        let shared = workers ?? Workers(configuration, logger: logger)
        workers = shared
        let fetcher = shared.fetcher, writer = shared.writer, limiter = shared.limiter
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
        // A download's end, a job's end, or the commit clock: results wait at most
        // `commitInterval` for their commit, even while the jobs still running take minutes.
        enum Event { case downloaded(Downloaded), finished(Job, Result<Outcome, SourceFailure>), commitDue }
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
                while !exhausted, !control.isStopping, downloading < downloadWindow,
                      toRender.count - toRenderHead < configuration.concurrency {
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
                        .downloaded(await self.download(job, url: url, sendMonicaToken: sendMonicaToken, fetcher: fetcher,
                                                        limiter: limiter, backlog: backlog, pool: shared.pool,
                                                        started: state.started))
                    }
                }
            }
            func startRenders() {
                while rendering < configuration.concurrency, toRenderHead < toRender.count, let item = toRender[toRenderHead] {
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
                        .finished(item.job, try await self.render(item, coordinator: coordinator, writer: writer,
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
                    try await commit(&finished, state: state, coordinator: coordinator, writer: writer, report: &report)
                case let .downloaded(item):
                    downloading -= 1
                    if item.notStarted {
                        // Read ahead, its turn came after the run began to stop: left for the next run.
                    } else if let result = item.result {
                        finished.append((item.job, result))
                        progressed()
                    } else {
                        toRender.append(item)
                    }
                case let .finished(job, result):
                    rendering -= 1
                    finished.append((job, result))
                    progressed()
                }
                if finished.count >= Self.mergeBatch {
                    try await commit(&finished, state: state, coordinator: coordinator, writer: writer, report: &report)
                }
                try readMore()
                startRenders()
                // The last job is done: the clock is not waited for (its sleep ends at once).
                if downloading + rendering == 0 && clockRunning { group.cancelAll() }
                startClock()
            }
        }
        try await commit(&finished, state: state, coordinator: coordinator, writer: writer, report: &report)
        report.requestsResent = fetcher.requestsResent
        report.peakRequestsInFlight = max(report.peakRequestsInFlight, limiter.peakRequestsInFlight)
        report.peakBytesWaitingForDecode = max(report.peakBytesWaitingForDecode, await backlog.peakWaitingBytes)
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
        await slot.acquire()
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
            entry.lastAccess = max(entry.lastAccess, accessTime(job.rank, started: started))
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
            lastAccess: accessTime(job.rank, started: started),
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

    /// Commits finished jobs in one transaction: entries saved (the files they replace
    /// are deleted at the end of the run), failures recorded, the report counted.
    private func commit(
        _ finished: inout [(Job, Result<Outcome, SourceFailure>)], state: RunState,
        coordinator: RenderCoordinator, writer: RenderWriter, report: inout RunReport
    ) async throws {
        guard !finished.isEmpty else { return }
        let batch = finished
        finished.removeAll(keepingCapacity: true)
        let started = state.started
        // The batch's new files reach the disk, with their names, before the index names them.
        if batch.contains(where: { if case .success(let outcome) = $0.1 { outcome.rendered.renderedNow } else { false } }) {
            try await writer.flush()
        }
        let replaced = try state.store.commit(batch.map { job, result -> RunStore.JobResult in
            switch result {
            case .success(let outcome):
                return .saved(key: job.key, entry: outcome.entry)
            case .failure(let failure):
                // A failed refresh never deletes a good cached photo.
                let kept = job.previous != nil ? accessTime(job.rank, started: started) : nil
                // Not remembered: a monogram is drawn again next time; a failure decided
                // here, from the URL and the policy, at no cost, is decided again next run,
                // under whatever policy that run has.
                if job.work.isMonogram || failure.failureClass.isDecidedLocally {
                    return .failed(key: job.key, keptAccess: kept, failure: nil)
                }
                return .failed(key: job.key, keptAccess: kept, failure: FailureRecord(
                    failureClass: failure.failureClass, reason: failure.reason, failedAt: Date(),
                    retryAfter: Date().addingTimeInterval(configuration.retryWait(after: failure.failureClass))))
            }
        })
        state.replaced(replaced)
        // What was committed, in metadata.json when a refresh is due (MetadataRefresh).
        try state.metadata.committed(savedEntries: batch.contains { if case .success = $0.1 { true } else { false } })
        var committed: [String] = []
        for (job, result) in batch {
            switch result {
            case .success(let outcome):
                state.add(outcome.entry.files.values)
                committed.append(outcome.entry.contentSHA256)
                count(job, outcome, into: &report)
                if let warning = outcome.rendered.warning {
                    let source = shownSource(job)
                    report.recordRecovered(url: source, reason: warning)
                    logger.warning("source decoded past damage", metadata: ["source": "\(shownURL(source))", "reason": "\(warning)"])
                }
                logger.debug("source", metadata: [
                    "source": "\(shownURL(job.key))", "decision": "\(decision(job, outcome))",
                    "fetchMs": .stringConvertible(Int(outcome.fetchSeconds * 1000)),
                    "renderMs": .stringConvertible(Int(outcome.renderSeconds * 1000)),
                    "bytes": .stringConvertible(outcome.bytesDownloaded),
                ])
            case .failure(let failure):
                let kept = job.previous != nil
                let source = shownSource(job)
                report.record(failure, url: source, keptCachedPhoto: kept)
                logger.warning("source failed", metadata: [
                    "source": "\(shownURL(source))", "class": "\(failure.failureClass.rawValue)",
                    "reason": "\(failure.reason)", "keptCachedPhoto": .stringConvertible(kept),
                ])
            }
        }
        await coordinator.forget(committed)
    }

    /// A job's source as the report and the log name it: its URL, or "inline photo sha256:…".
    private func shownSource(_ job: Job) -> String {
        job.key.hasPrefix("sha256:") ? "inline photo \(job.key)" : job.key
    }

    /// What was done with a source, for the debug log.
    private func decision(_ job: Job, _ outcome: Outcome) -> String {
        if outcome.notModified { return "not modified (304): files kept" }
        let how: String
        switch job.work {
        case .download: how = job.previous == nil ? "downloaded" : "stale, downloaded again"
        case .inline: how = "inline"
        case .monogram: return outcome.rendered.renderedNow ? "monogram drawn" : "monogram already drawn"
        }
        return how + (outcome.rendered.renderedNow ? ", decoded" : ", same bytes as a cached photo: not decoded")
    }

    private func count(_ job: Job, _ outcome: Outcome, into report: inout RunReport) {
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
            if !job.work.isMonogram { report.decoded += 1 }
            report.filesWritten += outcome.rendered.distinctFiles.count
        } else if !job.work.isMonogram {
            report.reusedIdentical += 1
        }
    }
}
