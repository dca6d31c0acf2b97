import AvatarCacheFetching
import AvatarCacheImaging
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

/// The download stage: a job's photo from its URL, within the run's limits. A slot of the
/// requests in flight for its host (`RequestLimiter`, which also holds a host that asked
/// us to wait), a place in the backlog of bodies waiting for a decode (`Backlog`), then
/// the bytes (`HTTPFetcher`: redirects, retries, the size and pixel limits). Its output
/// is the body to render, or already the job's result (a failure, a 304). A job with
/// nothing to download (an inline photo, a monogram) passes through as it came.
struct DownloadStage: Stage {
    let fetcher: HTTPFetcher
    let limiter: RequestLimiter
    let backlog: Backlog
    /// The decode threads, whose pace sizes the requests in flight.
    let decoders: DecodeWorkerPool
    let control: RunControl
    /// Sent only to the Monica host, for the sources that name it.
    let credential: MonicaCredential?
    /// When a copy fetched at a time, with the server's lifetime, goes stale.
    let freshUntil: @Sendable (Date, TimeInterval?) -> Date
    /// The run's start, from which a job's rank makes its access time.
    let started: Date

    /// A job past its download stage: the body to render (its place in the backlog with
    /// it), or already its result (a failure, a 304); inline photos and monograms need none.
    struct Output: Sendable {
        var job: WarmPipeline.Job
        var ticket: Backlog.Ticket?
        var photo: FetchedPhoto?
        var result: Result<WarmPipeline.Outcome, SourceFailure>?
        var fetchSeconds: Double = 0
        /// Its turn came once the run was stopping: no request was sent, nothing is recorded.
        var notStarted = false
    }

    /// A decode's time assumed before the first is timed: an account photo's, about 2 ms
    /// for its two tiers (BENCHMARKS.md, the account photos' floor).
    static let firstDecodeSeconds = 0.002

    /// Downloads one job's photo.
    func run(_ job: WarmPipeline.Job) async -> Output {
        guard case let .download(url, sendMonicaToken) = job.work else { return Output(job: job) }
        let slot = RequestSlot(limiter, for: url)
        // Its host's limits past --max-host-wait: failed without a request.
        if let outOfBudget = await slot.acquire() {
            return control.isStopping ? Output(job: job, notStarted: true) : Output(job: job, result: .failure(outOfBudget))
        }
        let ticket = await backlog.admit()
        // Once stopping, nothing new starts (the sources read ahead wait above); what runs finishes.
        guard !control.isStopping else {
            slot.release()
            await backlog.release(ticket)
            return Output(job: job, notStarted: true)
        }
        let jobStarted = DispatchTime.now().uptimeNanoseconds
        let validators = job.previous.map { Validators(etag: $0.etag, lastModified: $0.lastModified) }
        let fetchedResult: FetchResult
        do {
            fetchedResult = try await fetcher.fetch(
                url, credential: sendMonicaToken ? credential : nil,
                validators: validators?.etag == nil && validators?.lastModified == nil ? nil : validators,
                slot: slot, sized: { [backlog] in await backlog.sized(ticket, bytes: $0) })
        } catch {
            slot.release()
            await backlog.release(ticket)
            return Output(job: job, result: .failure(HTTPFetcher.classify(error)))
        }
        slot.release()
        let fetchSeconds = StageClock.seconds(since: jobStarted)
        switch fetchedResult {
        case .notModified(let lifetime, let etag, let lastModified):
            await backlog.release(ticket)
            // 304: the cached files stay; only the timestamps move.
            guard var entry = job.previous else {
                return Output(job: job, result: .failure(SourceFailure(.httpStatus, "HTTP 304 without a cached copy")))
            }
            let now = Date()
            entry.fetchedAt = now
            entry.freshUntil = freshUntil(now, lifetime)
            entry.lastAccess = max(entry.lastAccess, AccessTime.of(rank: job.rank, runStartedAt: started))
            entry.etag = etag ?? entry.etag
            entry.lastModified = lastModified ?? entry.lastModified
            return Output(job: job, result: .success(WarmPipeline.Outcome(entry: entry, bytesDownloaded: 0, rendered: RenderedFiles(entry),
                                                                          notModified: true, fetchSeconds: fetchSeconds)))
        case .fetched(let fetched):
            await backlog.downloaded(ticket, bytes: fetched.bytes.count)
            // As many requests in flight as keep the decode threads fed (RequestLimiter.resize),
            // from the first answer: until a decode has been timed, an account photo's 2 ms.
            limiter.resize(afterRequestOf: fetchSeconds, decodeSeconds: decoders.meanJobSeconds ?? Self.firstDecodeSeconds,
                           threads: decoders.threadCount)
            return Output(job: job, ticket: ticket, photo: fetched, fetchSeconds: fetchSeconds)
        }
    }
}

/// Seconds on the monotonic clock, for the stages' timings.
enum StageClock {
    static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
}
