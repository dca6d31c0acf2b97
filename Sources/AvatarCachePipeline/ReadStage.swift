import AvatarCacheExports
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging

/// The read stage: every export streamed into the index, `batchSize` records per
/// transaction: the profiles (colour kept once assigned), and this run's profiles and
/// distinct photo sources in priority order. Nothing of the exports stays in memory. The
/// index writes a batch while the next is parsed (two cores), at most two batches ahead.
/// Its input is the exports (how to read them is its own); its output, what the run's
/// report says of the read (`Outcome`).
struct ReadStage: Stage {
    /// An export, with its format (told before the run).
    typealias Export = (path: String, format: ExportFormat)

    var limits: ReaderLimits
    var fieldMap: FieldMap
    var shard: Shard?
    var store: RunStore
    var metadata: MetadataRefresh
    var started: Date
    var logger: Logger

    static let batchSize = 2_000

    /// What the read found: the report's figures of the read, its bad records and notes.
    struct Outcome: Sendable {
        var profiles = 0
        var sources = 0
        var profileRecords = 0
        var recordsInOtherShards = 0
        var notes: [String] = []
        var counts: [InputCount] = []
        var badRecords = 0
        var badRecordDetails: [BadRecord] = []

        var recordsLost: Int { counts.reduce(0) { $0 + $1.lost } }

        mutating func record(_ bad: BadRecord) {
            badRecords += 1
            if badRecordDetails.count < RunReport.detailLimit { badRecordDetails.append(bad) }
        }

        /// Adds an input's count; a shared one (Monica's pages) to the count of the same
        /// stated number, if any.
        mutating func record(_ count: InputCount) {
            if let index = counts.firstIndex(where: { $0.counts(with: count) }) {
                counts[index].add(count)
            } else {
                counts.append(count)
            }
        }
    }

    /// Reads `exports`, in priority order.
    func run(_ exports: [Export]) throws -> Outcome {
        var outcome = Outcome()
        var writer = BatchWriter(store: store, metadata: metadata, started: started, sharded: (shard?.count ?? 1) > 1)
        defer { try? writer.drain() }
        var ordinal = 0
        for (path, format) in exports {
            try read(path, as: format, from: &ordinal, writer: &writer, into: &outcome)
        }
        // What inputs state together and were read short of: said once, now.
        for count in outcome.counts where count.shared && count.lost > 0 {
            let bad = BadRecord(file: count.source + (count.inputs > 1 ? " and \(count.inputs - 1) more" : ""), index: 0, line: 0, reason: count.lossReason)
            outcome.record(bad)
            logger.error("records lost", metadata: ["input": "\(bad.file)", "statedBy": "\(count.statedBy)",
                                                   "stated": "\(count.stated)", "read": "\(count.read)", "unit": "\(count.unit)"])
        }
        let counts = try store.runCounts()
        outcome.sources = counts.sources
        outcome.profiles = counts.profiles
        return outcome
    }

    /// One export: its records into the writer's batches, ranked from `ordinal` on.
    private func read(_ path: String, as format: ExportFormat, from ordinal: inout Int, writer: inout BatchWriter,
                      into outcome: inout Outcome) throws {
        var file = ExportPass(path: path, fileStart: ordinal)
        /// Reports a bad record; `dropped`: nothing of it was used.
        func reportBad(_ bad: BadRecord, dropped: Bool) {
            if dropped { file.dropped(bad) }
            outcome.record(bad)
            logger.warning("bad record", metadata: ["record": "\(bad)"])
        }
        try format.reader(path: path, limits: limits, map: fieldMap).read { item in
            switch item {
            case .profile(var profile):
                guard clean(&profile, in: &file, reportBad: reportBad) else { return }
                // Positions count every shard's records: the same in every shard and in a
                // single run (access times, and which record of an id is the last).
                defer { ordinal += 1 }
                file.noteOrigin(profile.origin, rank: ordinal)
                let owned = shard?.owns(profile) ?? true
                if owned { outcome.profileRecords += 1 } else { outcome.recordsInOtherShards += 1 }
                try writer.add(RunStore.ExportRecord(profile: profile, position: RunStore.RecordPosition(rank: ordinal, fileStart: file.fileStart),
                                                     owned: owned))
            case .bad(let bad):
                reportBad(bad, dropped: true)
            case .note(let note):
                outcome.notes.append(note)
                logger.info("read", metadata: ["input": "\(note)"])
            case .count(let count):
                outcome.record(count)
                // A shared count (Monica's pages) is judged once every input is read.
                if count.lost > 0 && !count.shared {
                    logger.error("records lost", metadata: ["input": "\(count.source)", "statedBy": "\(count.statedBy)",
                                                           "stated": "\(count.stated)", "read": "\(count.read)", "unit": "\(count.unit)"])
                } else {
                    logger.info("read", metadata: ["input": "\(count.source): \(count)"])
                }
            }
        }
        try writer.flush()
        try writer.drain()
        for duplicate in writer.takeDuplicates().sorted(by: { ($0.origin?.file ?? "", $0.origin?.index ?? 0) < ($1.origin?.file ?? "", $1.origin?.index ?? 0) }) {
            outcome.profileRecords -= 1
            reportBad(BadRecord(file: duplicate.origin?.file ?? path, index: duplicate.origin?.index ?? 0, line: duplicate.origin?.line ?? 0,
                                reason: "user id \"\(duplicate.id)\" again (first at \(file.record(ofRank: duplicate.first))): this record is ignored, the first is kept"),
                      dropped: false)
        }
        if file.profiles == 0, let firstBad = file.firstBad {
            throw ExportError(file: path, reason: "read as \(format.rawValue), no record was usable; the first: record \(firstBad.index) (line \(firstBad.line)): \(firstBad.reason). Is --format right?")
        }
    }

    /// Makes the profile one the index can keep (the index stores text as C strings: a NUL
    /// would cut a key short), credentials out of its URL; false when it cannot be kept.
    @inline(__always)
    private func clean(_ profile: inout Profile, in file: inout ExportPass, reportBad: (BadRecord, Bool) -> Void) -> Bool {
        if profile.id.utf8.contains(0) {
            reportBad(Self.bad("the id contains a NUL character", profile, file), true)
            return false
        }
        if profile.displayName.utf8.contains(0) {
            profile.displayName = profile.displayName.replacingOccurrences(of: "\0", with: "\u{FFFD}")
        }
        if let url = profile.photoURL, url.utf8.contains(0) {
            reportBad(Self.bad("profile \"\(profile.id)\": the photo URL contains a NUL character", profile, file), false)
            profile.photo = nil
        }
        file.profiles += 1
        // Credentials in a URL are never sent, logged or stored.
        if case let .url(url, token) = profile.photo { profile.photo = .url(redactedURL(url), sendMonicaToken: token) }
        return true
    }

    /// A bad record of `profile`'s, where it was read.
    private static func bad(_ reason: String, _ profile: Profile, _ file: ExportPass) -> BadRecord {
        BadRecord(file: profile.origin?.file ?? file.path, index: profile.origin?.index ?? file.profiles + file.bad + 1,
                  line: profile.origin?.line ?? 0, reason: reason)
    }
}

/// What the read knows of the export it is reading.
private struct ExportPass {
    let path: String
    /// The rank of its first record.
    let fileStart: Int
    var profiles = 0
    var bad = 0
    var firstBad: BadRecord?
    /// The record each rank of this export was read from, kept where its offset changes
    /// (a users export: once): a repeated id's first record is named from its rank alone,
    /// without a column per profile in the run's table.
    private var origins: [(rank: Int, file: String, offset: Int)] = []

    init(path: String, fileStart: Int) {
        self.path = path
        self.fileStart = fileStart
    }

    mutating func dropped(_ record: BadRecord) {
        bad += 1
        firstBad = firstBad ?? record
    }

    mutating func noteOrigin(_ origin: RecordOrigin?, rank: Int) {
        guard let origin else { return }
        let offset = origin.index - rank
        if let last = origins.last, last.file == origin.file, last.offset == offset { return }
        origins.append((rank, origin.file, offset))
    }

    func record(ofRank rank: Int) -> String {
        guard let point = origins.last(where: { $0.rank <= rank }) else { return "record \(rank - fileStart + 1)" }
        return point.file == path ? "record \(rank + point.offset)" : "\(point.file) record \(rank + point.offset)"
    }
}

/// The read's batches, written on the index's writer queue while the next is parsed, at
/// most two in flight; records whose id an earlier record of the same export had, as the
/// writer tells them.
private struct BatchWriter {
    private let store: RunStore
    private let metadata: MetadataRefresh
    private let started: Date
    private let sharded: Bool
    /// The batch being filled, on the reading thread.
    private var batch: [RunStore.ExportRecord] = []
    /// Batches that may be sent to the writer now: two, less those in flight.
    private let free = ThreadCondition(2)
    private let failure = FirstError()
    /// Records repeating an id earlier in the same export: (the record, id, the first's rank).
    private let duplicates = LockedList<(origin: RecordOrigin?, id: String, first: Int)>()

    init(store: RunStore, metadata: MetadataRefresh, started: Date, sharded: Bool) {
        self.store = store
        self.metadata = metadata
        self.started = started
        self.sharded = sharded
        batch.reserveCapacity(ReadStage.batchSize)
    }

    mutating func add(_ record: RunStore.ExportRecord) throws {
        batch.append(record)
        if batch.count == ReadStage.batchSize { try flush() }
    }

    mutating func flush() throws {
        guard !batch.isEmpty else { return }
        let records = batch
        batch.removeAll(keepingCapacity: true)
        free.withLock { held in
            while held.state == 0 { held.wait() }
            held.state -= 1
        }
        let free = free
        if let error = failure.value {
            free.withLock { held in held.state += 1 }
            throw error
        }
        let (metadata, duplicates, failure) = (metadata, duplicates, failure)
        store.recordLater(records, at: started, sharded: sharded, repeated: { record, first in
            duplicates.append((record.profile.origin, record.profile.id, first))
        }, profilesChanged: { metadata.noteChange() }, completion: { error in
            if let error { failure.record(error) }
            free.withLock { held in
                held.state += 1
                held.signal()
            }
        })
    }

    /// Waits for the batches in flight; throws the first failure.
    func drain() throws {
        free.withLock { held in
            while held.state < 2 { held.wait() }
        }
        if let error = failure.value { throw error }
    }

    func takeDuplicates() -> [(origin: RecordOrigin?, id: String, first: Int)] { duplicates.takeAll() }
}
