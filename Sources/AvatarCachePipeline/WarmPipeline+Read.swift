import AvatarCacheExports
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

extension WarmPipeline {
    /// Streams every export into the index, `readBatch` records per transaction: the
    /// profiles (colour kept once assigned), and this run's profiles and distinct photo
    /// sources in priority order. Nothing of the exports stays in memory. The index
    /// writes a batch while the next is parsed (two cores), at most two batches ahead.
    /// `formats`: each export's, in `configuration.exports` order (told before the run).
    func readExports(_ formats: [ExportFormat], into report: inout RunReport, state: RunState) throws {
        var limits = ReaderLimits()
        limits.maxInlineBytes = configuration.fetchLimits.maxBytes
        limits.maxRecordBytes = configuration.maxRecordBytes
        limits.storageBucket = configuration.storageBucket
        var ordinal = 0
        var batch: [RunStore.ExportRecord] = []
        batch.reserveCapacity(Self.readBatch)
        let started = state.started
        let inFlight = DispatchSemaphore(value: 2)
        let failure = FirstError()
        let sharded = (configuration.shard?.count ?? 1) > 1
        /// Records repeating an id earlier in the same export: (the record, id, the first's rank).
        let duplicates = LockedList<(origin: RecordOrigin?, id: String, first: Int)>()
        func flush() throws {
            guard !batch.isEmpty else { return }
            inFlight.wait()
            if let error = failure.value {
                inFlight.signal()
                throw error
            }
            let metadata = state.metadata
            state.store.recordLater(batch, at: started, sharded: sharded, repeated: { record, first in
                duplicates.append((record.profile.origin, record.profile.id, first))
            }, profilesChanged: { metadata.noteChange() }, completion: { error in
                if let error { failure.record(error) }
                inFlight.signal()
            })
            batch.removeAll(keepingCapacity: true)
        }
        /// Waits for the batches in flight; throws the first failure.
        func drain() throws {
            inFlight.wait()
            inFlight.wait()
            inFlight.signal()
            inFlight.signal()
            if let error = failure.value { throw error }
        }
        defer { try? drain() }
        for (path, format) in zip(configuration.exports, formats) {
            var profilesInFile = 0, badInFile = 0
            var firstBad: BadRecord?
            let fileStart = ordinal
            /// The record each rank of this export was read from, kept where its offset
            /// changes (a users export: once): a repeated id's first record is named from
            /// its rank alone, without a column per profile in the run's table.
            var origins: [(rank: Int, file: String, offset: Int)] = []
            func noteOrigin(_ origin: RecordOrigin?, rank: Int) {
                guard let origin else { return }
                let offset = origin.index - rank
                if let last = origins.last, last.file == origin.file, last.offset == offset { return }
                origins.append((rank, origin.file, offset))
            }
            func record(ofRank rank: Int) -> String {
                guard let point = origins.last(where: { $0.rank <= rank }) else { return "record \(rank - fileStart + 1)" }
                return point.file == path ? "record \(rank + point.offset)" : "\(point.file) record \(rank + point.offset)"
            }
            /// Reports a bad record; `dropped`: nothing of it was used.
            func reportBad(_ bad: BadRecord, dropped: Bool) {
                if dropped {
                    badInFile += 1
                    firstBad = firstBad ?? bad
                }
                report.record(bad)
                logger.warning("bad record", metadata: ["record": "\(bad)"])
            }
            try format.reader(path: path, limits: limits, map: configuration.fieldMap).read { item in
                switch item {
                case .profile(var profile):
                    // The index stores text as C strings: a NUL would cut a key short.
                    func bad(_ reason: String) -> BadRecord {
                        BadRecord(file: profile.origin?.file ?? path, index: profile.origin?.index ?? profilesInFile + badInFile + 1,
                                  line: profile.origin?.line ?? 0, reason: reason)
                    }
                    if profile.id.utf8.contains(0) {
                        reportBad(bad("the id contains a NUL character"), dropped: true)
                        return
                    }
                    if profile.displayName.utf8.contains(0) {
                        profile.displayName = profile.displayName.replacingOccurrences(of: "\0", with: "\u{FFFD}")
                    }
                    if let url = profile.photoURL, url.utf8.contains(0) {
                        reportBad(bad("profile \"\(profile.id)\": the photo URL contains a NUL character"), dropped: false)
                        profile.photo = nil
                    }
                    profilesInFile += 1
                    // Credentials in a URL are never sent, logged or stored.
                    if case let .url(url, token) = profile.photo { profile.photo = .url(redactedURL(url), sendMonicaToken: token) }
                    // Positions count every shard's records: the same in every shard and in
                    // a single run (access times, and which record of an id is the last).
                    defer { ordinal += 1 }
                    noteOrigin(profile.origin, rank: ordinal)
                    let position = RunStore.RecordPosition(rank: ordinal, fileStart: fileStart)
                    if let shard = configuration.shard, !shard.owns(profile) {
                        report.recordsInOtherShards += 1
                        batch.append(RunStore.ExportRecord(profile: profile, position: position, owned: false))
                    } else {
                        report.profileRecords += 1
                        batch.append(RunStore.ExportRecord(profile: profile, position: position, owned: true))
                    }
                    if batch.count == Self.readBatch { try flush() }
                case .bad(let bad):
                    reportBad(bad, dropped: true)
                case .note(let note):
                    report.inputNotes.append(note)
                    logger.info("read", metadata: ["input": "\(note)"])
                case .count(let count):
                    report.record(count)
                    // A shared count (Monica's pages) is judged once every input is read.
                    if count.lost > 0 && !count.shared {
                        logger.error("records lost", metadata: ["input": "\(count.source)", "statedBy": "\(count.statedBy)",
                                                               "stated": "\(count.stated)", "read": "\(count.read)", "unit": "\(count.unit)"])
                    } else {
                        logger.info("read", metadata: ["input": "\(count.source): \(count)"])
                    }
                }
            }
            try flush()
            try drain()
            for duplicate in duplicates.takeAll().sorted(by: { ($0.origin?.file ?? "", $0.origin?.index ?? 0) < ($1.origin?.file ?? "", $1.origin?.index ?? 0) }) {
                report.profileRecords -= 1
                reportBad(BadRecord(file: duplicate.origin?.file ?? path, index: duplicate.origin?.index ?? 0, line: duplicate.origin?.line ?? 0,
                                    reason: "user id \"\(duplicate.id)\" again (first at \(record(ofRank: duplicate.first))): this record is ignored, the first is kept"),
                          dropped: false)
            }
            if profilesInFile == 0, let firstBad {
                throw ExportError(file: path, reason: "read as \(format.rawValue), no record was usable; the first: record \(firstBad.index) (line \(firstBad.line)): \(firstBad.reason). Is --format right?")
            }
        }
        // What inputs state together and were read short of: said once, now.
        for count in report.inputCounts where count.shared && count.lost > 0 {
            let bad = BadRecord(file: count.source + (count.inputs > 1 ? " and \(count.inputs - 1) more" : ""), index: 0, line: 0, reason: count.lossReason)
            report.record(bad)
            logger.error("records lost", metadata: ["input": "\(bad.file)", "statedBy": "\(count.statedBy)",
                                                   "stated": "\(count.stated)", "read": "\(count.read)", "unit": "\(count.unit)"])
        }
        let counts = try state.store.runCounts()
        report.sources = counts.sources
        report.profiles = counts.profiles
    }
}
