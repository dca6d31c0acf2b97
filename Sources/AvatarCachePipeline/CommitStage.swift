import AvatarCacheFetching
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging

/// The commit stage: finished jobs into the index, a batch per transaction (entries
/// saved, their replaced files noted for deletion at the end of the run; failures
/// remembered until their retry time), each logged; what it committed, counted for the
/// report (`JobTally`).
struct CommitStage: Stage {
    let state: WarmPipeline.RunState
    let writer: RenderWriter
    let coordinator: RenderCoordinator
    let logger: Logger
    /// How long a failure of its class is remembered (`WarmConfiguration.retryWait`).
    let retryWait: @Sendable (FailureClass) -> TimeInterval

    typealias Finished = (WarmPipeline.Job, Result<WarmPipeline.Outcome, SourceFailure>)

    /// Commits `batch` in one transaction.
    func run(_ batch: [Finished]) async throws -> JobTally {
        guard !batch.isEmpty else { return JobTally() }
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
                let kept = job.previous != nil ? AccessTime.of(rank: job.rank, runStartedAt: started) : nil
                // Not remembered: a monogram is drawn again next time; a failure decided
                // here, from the URL and the policy, at no cost, is decided again next run,
                // under whatever policy that run has.
                if job.work.isMonogram || failure.failureClass.isDecidedLocally {
                    return .failed(key: job.key, keptAccess: kept, failure: nil)
                }
                return .failed(key: job.key, keptAccess: kept, failure: FailureRecord(
                    failureClass: failure.failureClass, reason: failure.reason, failedAt: Date(),
                    retryAfter: Date().addingTimeInterval(retryWait(failure.failureClass))))
            }
        })
        state.replaced(replaced)
        // What was committed, in metadata.json when a refresh is due (MetadataRefresh).
        try state.metadata.committed(savedEntries: batch.contains { if case .success = $0.1 { true } else { false } })
        var tally = JobTally()
        var committed: [String] = []
        for (job, result) in batch {
            switch result {
            case .success(let outcome):
                state.add(outcome.entry.files.values)
                committed.append(outcome.entry.contentSHA256)
                tally.count(job, outcome)
                if let warning = outcome.rendered.warning {
                    let source = Self.shownSource(job)
                    tally.recordRecovered(url: source, reason: warning)
                    logger.warning("source decoded past damage", metadata: ["source": "\(shownURL(source))", "reason": "\(warning)"])
                }
                logger.debug("source", metadata: [
                    "source": "\(shownURL(job.key))", "decision": "\(Self.decision(job, outcome))",
                    "fetchMs": .stringConvertible(Int(outcome.fetchSeconds * 1000)),
                    "renderMs": .stringConvertible(Int(outcome.renderSeconds * 1000)),
                    "bytes": .stringConvertible(outcome.bytesDownloaded),
                ])
            case .failure(let failure):
                let kept = job.previous != nil
                let source = Self.shownSource(job)
                tally.record(failure, url: source, keptCachedPhoto: kept)
                logger.warning("source failed", metadata: [
                    "source": "\(shownURL(source))", "class": "\(failure.failureClass.rawValue)",
                    "reason": "\(failure.reason)", "keptCachedPhoto": .stringConvertible(kept),
                ])
            }
        }
        coordinator.forget(committed)
        return tally
    }

    /// A job's source as the report and the log name it: its URL, or "inline photo sha256:…".
    static func shownSource(_ job: WarmPipeline.Job) -> String {
        job.key.hasPrefix("sha256:") ? "inline photo \(job.key)" : job.key
    }

    /// What was done with a source, for the debug log.
    static func decision(_ job: WarmPipeline.Job, _ outcome: WarmPipeline.Outcome) -> String {
        if outcome.notModified { return "not modified (304): files kept" }
        let how: String
        switch job.work {
        case .download: how = job.previous == nil ? "downloaded" : "stale, downloaded again"
        case .inline: how = "inline"
        case .monogram: return outcome.rendered.renderedNow ? "monogram drawn" : "monogram already drawn"
        }
        return how + (outcome.rendered.renderedNow ? ", decoded" : ", same bytes as a cached photo: not decoded")
    }
}

/// What the job stages did, counted: returned by each commit, added up over a stage's
/// batches, then added to the run's report.
struct JobTally: Sendable {
    var downloaded = 0
    var notModified = 0
    var reusedIdentical = 0
    var decoded = 0
    var inlinePhotos = 0
    var monogramsRendered = 0
    var bytesDownloaded: Int64 = 0
    var filesWritten = 0
    var failed = 0
    var failuresByClass: [String: Int] = [:]
    var failures: [RunReport.Failure] = []
    var recoveredImages = 0
    var recoveredImageDetails: [RunReport.Recovered] = []
    var requestsResent = 0
    var peakRequestsInFlight = 0
    var peakBytesWaitingForDecode = 0
    /// Each host's requests, refusals, waits and pace (the limiter's, over the run).
    var hosts: [HostReport] = []

    mutating func count(_ job: WarmPipeline.Job, _ outcome: WarmPipeline.Outcome) {
        if outcome.notModified {
            notModified += 1
            return
        }
        switch job.work {
        case .download:
            downloaded += 1
            bytesDownloaded += Int64(outcome.bytesDownloaded)
        case .inline: inlinePhotos += 1
        case .monogram: monogramsRendered += outcome.rendered.renderedNow ? 1 : 0
        }
        if outcome.rendered.renderedNow {
            if !job.work.isMonogram { decoded += 1 }
            filesWritten += outcome.rendered.distinctFiles.count
        } else if !job.work.isMonogram {
            reusedIdentical += 1
        }
    }

    mutating func record(_ failure: SourceFailure, url: String, keptCachedPhoto: Bool) {
        failed += 1
        failuresByClass[failure.failureClass.rawValue, default: 0] += 1
        if failures.count < RunReport.detailLimit {
            failures.append(RunReport.Failure(url: shownURL(url), failureClass: failure.failureClass, reason: failure.reason,
                                              keptCachedPhoto: keptCachedPhoto))
        }
    }

    mutating func recordRecovered(url: String, reason: String) {
        recoveredImages += 1
        if recoveredImageDetails.count < RunReport.detailLimit {
            recoveredImageDetails.append(RunReport.Recovered(url: shownURL(url), reason: reason))
        }
    }

    /// Another batch's (or stage's) tally added: counts summed, details kept up to the
    /// report's limit, the peaks the larger.
    mutating func add(_ other: JobTally) {
        downloaded += other.downloaded
        notModified += other.notModified
        reusedIdentical += other.reusedIdentical
        decoded += other.decoded
        inlinePhotos += other.inlinePhotos
        monogramsRendered += other.monogramsRendered
        bytesDownloaded += other.bytesDownloaded
        filesWritten += other.filesWritten
        failed += other.failed
        failuresByClass.merge(other.failuresByClass, uniquingKeysWith: +)
        failures += other.failures.prefix(max(0, RunReport.detailLimit - failures.count))
        recoveredImages += other.recoveredImages
        recoveredImageDetails += other.recoveredImageDetails.prefix(max(0, RunReport.detailLimit - recoveredImageDetails.count))
        requestsResent = max(requestsResent, other.requestsResent)
        peakRequestsInFlight = max(peakRequestsInFlight, other.peakRequestsInFlight)
        peakBytesWaitingForDecode = max(peakBytesWaitingForDecode, other.peakBytesWaitingForDecode)
    }
}
