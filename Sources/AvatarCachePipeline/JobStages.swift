import AvatarCacheSupport

/// The job stages of a run (download, render, commit) and the render stage's places: what
/// the scheduler's tasks run. Rendering has one entry, `render(_:)`, whether the body
/// waited in the queue or the task that downloaded it renders it in place.
struct JobStages: Sendable {
    let download: DownloadStage
    let renderStage: RenderStage
    let commit: CommitStage
    /// `concurrency` places: taken by the scheduler for the sources queued for the render
    /// stage, and by a download task for its own body when nothing is queued (so the
    /// queued go first).
    let places: WarmPipeline.RenderPlaces

    /// Renders a job in a render place taken for it, and gives the place back.
    func render(_ item: DownloadStage.Output) async throws -> Result<WarmPipeline.Outcome, SourceFailure> {
        defer { places.release() }
        return try await renderStage.run(item)
    }

    /// Downloads a job's photo; when its body came, a render place is free and no source
    /// is queued for one, renders it in this task (its body then leaves with it). Its
    /// output is then the job's result; otherwise the body waits for the render stage.
    func downloadAndRenderInPlace(_ job: WarmPipeline.Job) async throws -> DownloadStage.Output {
        var item = await download.run(job)
        if item.result == nil, !item.notStarted, places.takeIfNoneQueued() {
            item.result = try await render(item)
            item.photo = nil
            item.ticket = nil
        }
        return item
    }
}
