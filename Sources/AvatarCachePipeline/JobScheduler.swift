import AvatarCacheFetching
import AvatarCacheSupport

/// Where a scheduler's jobs come from: the first (already read), the rest read lazily,
/// and for the progress the jobs expected and the sources the plan settled without a job.
struct JobFeed {
    /// The progress's name for these jobs ("photos", "monograms").
    let stage: String
    var first: WarmPipeline.Job?
    let next: () throws -> WarmPipeline.Job?
    let total: () -> Int
    let settled: () -> Int
}

/// Runs a feed's jobs through the job stages (`JobStages`) in one task group, and commits
/// their results `WarmPipeline.mergeBatch` at a time or every
/// `WarmPipeline.commitInterval` seconds. Its state is the run's through these stages:
/// the jobs downloading and rendering, the queue for the render stage, the results
/// waiting for their commit, the commit clock and what the commits counted. Each task of
/// the group ends in an `Event`, which `handle(_:in:)` takes in; nothing else changes
/// that state. Used from one task only.
final class JobScheduler {
    typealias Group = ThrowingTaskGroup<Event, any Error>

    /// A download's end, a render's end, the commit clock, or a commit's end.
    enum Event: Sendable {
        case downloaded(DownloadStage.Output)
        case finished(WarmPipeline.Job, Result<WarmPipeline.Outcome, SourceFailure>)
        case commitDue
        case committed(JobTally)
    }

    private let stages: JobStages
    private var feed: JobFeed
    private let control: RunControl
    private let limiter: RequestLimiter
    /// Sources rendered at once (`--concurrency`).
    private let concurrency: Int
    /// Sources in the download stage at most: the requests in flight and the lookahead.
    private let downloadWindow: Int
    private let onProgress: (@Sendable (RunProgress) -> Void)?

    /// The sources past their download (or needing none) waiting for a render place.
    private var toRender = WarmPipeline.RenderQueue()
    /// Results not yet handed to a commit.
    private var finished: [CommitStage.Finished] = []
    /// What the commits so far counted.
    private var tally = JobTally()
    private var done = 0, downloading = 0, rendering = 0
    /// The feed has no more jobs.
    private var exhausted = false
    private var clockRunning = false
    private var committing = false

    init(stages: JobStages, feed: JobFeed, control: RunControl, limiter: RequestLimiter, concurrency: Int,
         downloadWindow: Int, onProgress: (@Sendable (RunProgress) -> Void)?) {
        self.stages = stages
        self.feed = feed
        self.control = control
        self.limiter = limiter
        self.concurrency = concurrency
        self.downloadWindow = downloadWindow
        self.onProgress = onProgress
    }

    /// Runs every job the feed gives (none new once the run stops), then commits what is
    /// left; returns what the commits counted.
    func run() async throws -> JobTally {
        try await withThrowingTaskGroup(of: Event.self) { group in
            try readMore(&group)
            startRenders(&group)
            while let event = try await group.next() {
                try handle(event, in: &group)
            }
        }
        try await commitRest()
        return tally
    }

    /// Takes in a task's end, then starts what there is room for: a commit when a batch
    /// is full, the jobs read, the queued renders, and the commit clock.
    ///
    /// A commit runs beside the stages (one at a time): while it waits for the disk,
    /// downloads and renders go on. Results wait at most `commitInterval` for their
    /// commit, even while the jobs still running take minutes.
    func handle(_ event: Event, in group: inout Group) throws {
        switch event {
        case .commitDue:
            clockRunning = false
            // With every job done the clock was cut short: the last commit follows (`commitRest`).
            if running > 0 { commitBeside(&group) }
        case let .committed(committed):
            committing = false
            tally.add(committed)
        case let .downloaded(item):
            downloading -= 1
            downloaded(item)
        case let .finished(job, result):
            rendering -= 1
            finish(job, result)
        }
        if finished.count >= WarmPipeline.mergeBatch { commitBeside(&group) }
        try readMore(&group)
        startRenders(&group)
        // The last job is done: the clock is not waited for (its sleep ends at once);
        // a commit under way is (cancelling it would fail its writes).
        if running == 0 && clockRunning && !committing { group.cancelAll() }
        startClock(&group)
    }

    /// Jobs in the download or render stage.
    private var running: Int { downloading + rendering }

    /// A download's end: its result (rendered in place, or a failure, a 304), or its body
    /// queued for the render stage.
    private func downloaded(_ item: DownloadStage.Output) {
        if item.notStarted {
            // Read ahead, its turn came after the run began to stop: left for the next run.
        } else if let result = item.result {
            finish(item.job, result)
        } else {
            toRender.append(item)
            stages.places.queued(toRender.count)
        }
    }

    /// A job's result, to commit; its progress told.
    private func finish(_ job: WarmPipeline.Job, _ result: Result<WarmPipeline.Outcome, SourceFailure>) {
        finished.append((job, result))
        done += 1
        let settled = feed.settled()
        onProgress?(RunProgress(done: done + settled, total: max(feed.total(), done + settled), stage: feed.stage))
    }

    /// Reads jobs while the stages have room: a download starts at once, the rest queue
    /// for the render stage.
    private func readMore(_ group: inout Group) throws {
        // Once stopping, nothing new starts; what runs finishes. Bodies downloaded and
        // waiting for the render stage are bounded by the backlog (their count and bytes);
        // beside them, `concurrency` waiting without a download (inline photos,
        // monograms). Held to `concurrency` alone, a round trip's answers arriving
        // together stopped the reading, and so the next requests, until all but a few
        // were rendered.
        while !exhausted, !control.isStopping, downloading < downloadWindow,
              toRender.count < concurrency + limiter.currentWindow {
            guard let job = try feed.first.take() ?? feed.next() else {
                exhausted = true
                return
            }
            guard case .download = job.work else {
                toRender.append(DownloadStage.Output(job: job))
                continue
            }
            downloading += 1
            group.addTask { [stages] in .downloaded(try await stages.downloadAndRenderInPlace(job)) }
        }
    }

    /// Starts the queued renders the render stage has places for.
    private func startRenders(_ group: inout Group) {
        defer { stages.places.queued(toRender.count) }
        while !toRender.isEmpty, stages.places.take() {
            let item = toRender.removeFirst()
            rendering += 1
            group.addTask { [stages] in .finished(item.job, try await stages.render(item)) }
        }
    }

    /// Commits the results finished so far beside the stages, unless a commit runs.
    private func commitBeside(_ group: inout Group) {
        guard !committing, !finished.isEmpty else { return }
        committing = true
        let batch = takeFinished()
        group.addTask { [stages] in .committed(try await stages.commit.run(batch)) }
    }

    /// Starts the commit clock, while jobs run and results wait for a commit.
    private func startClock(_ group: inout Group) {
        guard !clockRunning, running > 0, !finished.isEmpty else { return }
        clockRunning = true
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(WarmPipeline.commitInterval * 1e9))
            return .commitDue
        }
    }

    /// The results finished last, committed in one transaction once every task has ended.
    private func commitRest() async throws {
        guard !finished.isEmpty else { return }
        tally.add(try await stages.commit.run(takeFinished()))
    }

    /// The results finished so far, handed over once.
    private func takeFinished() -> [CommitStage.Finished] {
        defer { finished.removeAll(keepingCapacity: true) }
        return finished
    }
}
