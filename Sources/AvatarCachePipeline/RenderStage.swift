import AvatarCacheFetching
import AvatarCacheImaging
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

/// The render stage: a job's files, drawn on the decode threads (`RenderWriter`), or
/// re-used when this content's are already on disk or being drawn for another source
/// (`RenderCoordinator`), then the entry the index will hold. A failure of the source is
/// its result; a failure of the cache itself is thrown and ends the run.
struct RenderStage: Stage {
    let coordinator: RenderCoordinator
    let writer: RenderWriter
    /// Where a downloaded body's place is given back, once rendered or not.
    let backlog: Backlog
    /// The largest tier, the entry's own file.
    let largestTier: String
    /// When a copy fetched at a time, with the server's lifetime, goes stale.
    let freshUntil: @Sendable (Date, TimeInterval?) -> Date
    /// The run's start, from which a job's rank makes its access time.
    let started: Date

    /// Renders (or re-uses) one job's files.
    func run(_ item: DownloadStage.Output) async throws -> Result<WarmPipeline.Outcome, SourceFailure> {
        let job = item.job, photo = item.photo
        let contentSHA256: String
        let render: @Sendable () async throws -> RenderedFiles
        switch job.work {
        case .download:
            guard let fetched = photo else { return .failure(SourceFailure(.network, "no body")) }
            contentSHA256 = fetched.sha256
            render = { [writer] in try await writer.renderPhoto(fetched.bytes, contentSHA256: fetched.sha256) }
        case .inline(let inline):
            contentSHA256 = inline.sha256
            render = { [writer] in try await writer.renderPhoto(inline.bytes, contentSHA256: inline.sha256, inline: true) }
        case .monogram(let spec):
            let key = SHA256Hex.of(Array(spec.key.utf8))
            contentSHA256 = key
            render = { [writer] in try await writer.renderMonogram(spec, contentSHA256: key) }
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
        // The entry's own file is its largest tier's; a render always writes every tier,
        // so one without it is failed, never indexed under an empty name.
        guard let largest = rendered.files[largestTier] else {
            return .failure(SourceFailure(.invalidImage, "rendered without its \(largestTier) px file"))
        }
        // A monogram's placeholder is its colour, whoever drew its files.
        var placeholder = rendered.placeholder
        if case .monogram(let spec) = job.work { placeholder = Placeholder(color: spec.background) }
        var entry = CacheEntry(
            kind: job.work.isMonogram ? .monogram : .photo,
            filename: largest.filename,
            lastAccess: AccessTime.of(rank: job.rank, runStartedAt: started),
            fileSize: rendered.distinctFiles.reduce(0) { $0 + $1.fileSize },
            contentSHA256: contentSHA256,
            sourceBytes: nil, sourceFormat: rendered.format,
            sourceWidth: rendered.sourceWidth, sourceHeight: rendered.sourceHeight,
            fetchedAt: Date(), etag: photo?.etag, lastModified: photo?.lastModified,
            files: rendered.files, placeholder: placeholder
        )
        entry.freshUntil = freshUntil(entry.fetchedAt, photo?.freshnessLifetime)
        switch job.work {
        case .download: entry.sourceBytes = photo?.bytes.count
        case .inline(let inline): entry.sourceBytes = inline.bytes.count
        case .monogram: break
        }
        return .success(WarmPipeline.Outcome(entry: entry, bytesDownloaded: photo?.bytes.count ?? 0, rendered: rendered,
                                             fetchSeconds: item.fetchSeconds, renderSeconds: StageClock.seconds(since: renderStarted)))
    }
}
