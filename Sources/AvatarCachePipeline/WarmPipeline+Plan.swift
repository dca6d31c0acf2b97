import AvatarCacheImaging
import AvatarCacheMonograms
import AvatarCacheStore
import AvatarCacheSupport
import Foundation

extension WarmPipeline {
    /// The photo jobs of this run, planned a page of sources at a time from the index in
    /// priority order: a source cached within its freshness (or inline, named by its
    /// content) needs no work; one that failed lately is not asked for again before its
    /// retry time; the rest become jobs. The sources whose host's limits ran past
    /// `--max-host-wait` last time go first, then the others.
    final class PhotoJobFeed {
        let pipeline: WarmPipeline
        let state: RunState
        private var lastRank = -1
        private var buffer: [Job] = []
        private var exhausted = false
        /// Planning the sources that failed as `rateLimited` last time (the first pass);
        /// their keys, for the second pass to pass over.
        private var rateLimitedFirst = true
        private var plannedFirst: Set<String> = []
        private(set) var fresh = 0
        private(set) var skippedRecentlyFailed = 0
        var settled: Int { fresh + skippedRecentlyFailed }

        /// Jobs that go after the first page with a photo to download, planned then: the
        /// monograms of the profiles without a photo, drawn while the first requests wait
        /// for their answers (far away, four round trips). A run with nothing to download
        /// (a re-run inside the TTL) plans none here.
        private var alongside: (() throws -> [Job])?
        /// How many jobs `alongside` gave (for the progress).
        private(set) var alongsideCount = 0
        /// A page planned so far had a photo to download.
        private var plannedDownload = false

        init(pipeline: WarmPipeline, state: RunState, alongside: (() throws -> [Job])? = nil) {
            self.pipeline = pipeline
            self.state = state
            self.alongside = alongside
        }

        func next() throws -> Job? {
            while buffer.isEmpty && !exhausted { try refill() }
            if let plan = alongside, plannedDownload {
                alongside = nil
                // Highest priority last in the plan: first here.
                let jobs = try plan().reversed()
                alongsideCount = jobs.count
                buffer.append(contentsOf: jobs)
            }
            return buffer.isEmpty ? nil : buffer.removeFirst()
        }

        private func refill() throws {
            let started = state.started
            if rateLimitedFirst {
                if let page = try state.store.rateLimitedSourcePage(after: lastRank, limit: 256) {
                    plannedFirst.formUnion(page.sources.map(\.key))
                    plan(page, started: started)
                    return
                }
                rateLimitedFirst = false
                lastRank = -1
            }
            guard let page = try state.store.sourcePage(after: lastRank, limit: 256) else {
                exhausted = true
                return
            }
            plan(page, started: started)
        }

        private func plan(_ page: RunStore.SourcePage, started: Date) {
            var jobs: [Job] = []
            for source in page.sources {
                lastRank = source.rank
                if !rateLimitedFirst && plannedFirst.contains(source.key) { continue }
                let previous = page.entries[source.key]
                let complete = previous.map { pipeline.isComplete($0, state: state) } ?? false
                if let previous, complete {
                    let inline: Bool
                    if case .inline = source.photo { inline = true } else { inline = false }
                    // Inline photos are named by their content: cached means current.
                    let freshUntil = previous.freshUntil ?? previous.fetchedAt.addingTimeInterval(pipeline.configuration.ttl)
                    if inline || started < freshUntil {
                        fresh += 1
                        pipeline.logger.debug("source", metadata: [
                            "source": "\(shownURL(source.key))",
                            "decision": "\(inline ? "inline, cached: no work" : "fresh until \(ISO8601.format(freshUntil)): no request")",
                        ])
                        continue
                    }
                }
                if !complete, let failure = page.failures[source.key], !failure.failureClass.isDecidedLocally, failure.failureClass != .rateLimited,
                   started < min(failure.retryAfter, failure.failedAt.addingTimeInterval(pipeline.configuration.retryWait(after: failure.failureClass))) {
                    // Failed recently: not asked for again before its retry time, as this
                    // run counts it (`--failure-ttl-hours 0` asks again at once).
                    skippedRecentlyFailed += 1
                    pipeline.logger.debug("source", metadata: [
                        "source": "\(shownURL(source.key))",
                        "decision": "failed \(ISO8601.format(failure.failedAt)) (\(failure.failureClass.rawValue)): not asked again before \(ISO8601.format(failure.retryAfter))",
                    ])
                    continue
                }
                let work: Work
                switch source.photo {
                case let .url(url, sendMonicaToken):
                    work = .download(url, sendMonicaToken: sendMonicaToken)
                    plannedDownload = true
                case .inline(let photo): work = .inline(photo)
                }
                jobs.append(Job(key: source.key, work: work, rank: source.rank, previous: complete ? previous : nil))
            }
            buffer.append(contentsOf: jobs)
        }
    }

    /// The profiles of this run that show one monogram, and the best rank among them.
    struct MonogramGroup {
        var spec: MonogramSpec
        var rank: Int
        var profiles: Int
    }

    /// The monogram plan: one job per distinct monogram not already cached, highest
    /// priority last (for `popLast`); the groups of profiles that show each monogram; and
    /// how many of this run's profiles show their photo.
    struct MonogramPlan {
        var jobs: [Job]
        var groups: [String: MonogramGroup]
        var profilesShowingPhoto: Int
        var profilesWithoutPhoto: Int
    }

    /// Monograms for this run's profiles that have no cached photo; a cached one is
    /// marked accessed at its best rank. `photoless`: only those of the profiles with no
    /// photo to fetch, which are known before the photos are.
    func planMonograms(state: RunState, photoless: Bool = false) throws -> MonogramPlan {
        let census = try state.store.monogramCensus(photoless: photoless)
        var groups: [String: MonogramGroup] = [:]
        for group in census.groups {
            let spec = MonogramSpec(initials: group.initials, glyph: group.glyph, background: group.color,
                                    foreground: AvatarColor.textColor(on: group.color))
            let next = MonogramGroup(spec: spec, rank: group.rank, profiles: group.profiles)
            groups[spec.key] = groups[spec.key].map {
                MonogramGroup(spec: $0.spec, rank: min($0.rank, next.rank), profiles: $0.profiles + next.profiles)
            } ?? next
        }
        // Highest priority last (for `popLast`).
        let ordered = groups.sorted(by: { $0.value.rank > $1.value.rank }).map(\.key)
        // A cached, complete monogram is marked accessed at its best rank; the others are
        // drawn. A thousand at a time: a run's monograms can be a hundred thousand.
        var jobs: [Job] = []
        for start in stride(from: 0, to: ordered.count, by: 1000) {
            let keys = Array(ordered[start..<min(start + 1000, ordered.count)])
            let cached = try state.store.entries(forKeys: keys)
            var accessed: [(key: String, at: Date)] = []
            for key in keys {
                guard let group = groups[key] else { continue }
                if let entry = cached[key], isComplete(entry, state: state) {
                    accessed.append((key, AccessTime.of(rank: group.rank, runStartedAt: state.started)))
                } else {
                    jobs.append(Job(key: key, work: .monogram(group.spec), rank: group.rank, previous: nil))
                }
            }
            try state.store.markAccessed(accessed)
        }
        return MonogramPlan(jobs: jobs, groups: groups, profilesShowingPhoto: census.profilesShowingPhoto,
                            profilesWithoutPhoto: census.profilesWithoutPhoto)
    }

    /// A file for every tier asked for, in the format asked for, on disk with the
    /// recorded size.
    func isComplete(_ entry: CacheEntry, state: RunState) -> Bool {
        let format = entry.kind == .monogram ? configuration.monogramFormat : configuration.outputFormat
        return configuration.tiers.allSatisfy { tier in
            guard let file = entry.files[String(tier)] else { return false }
            return file.filename.hasPrefix(entry.contentSHA256)
                && file.filename.hasSuffix(".\(format.fileExtension)")
                && state.size(of: file.filename) == file.fileSize
        }
    }

    /// Files already made for this content, complete: from an entry of the index (any
    /// source with the same bytes) or from orphans found on disk.
    func knownFiles(forContent contentSHA256: String, state: RunState) -> RenderedFiles? {
        if let recovered = state.recovered[contentSHA256] { return recovered }
        // Every file of a complete entry is on disk under its content's name.
        guard state.hasFiles(forContent: contentSHA256) else { return nil }
        let entry = try? state.store.entries(withContent: contentSHA256).first { isComplete($0, state: state) }
        return entry.flatMap { $0 }.map(RenderedFiles.init)
    }

    /// Cache files no entry references, grouped by content: when every tier of a photo
    /// is there, a download with that content re-uses them instead of decoding again.
    func recoverOrphans(_ orphans: Set<String>, directory: CacheDirectory) -> [String: RenderedFiles] {
        var byContent: [String: [Int: String]] = [:]
        for name in orphans where name.hasSuffix(".\(configuration.outputFormat.fileExtension)") {
            let stem = name.split(separator: ".")[0].split(separator: "-")
            if let tier = Int(stem[1]) { byContent[String(stem[0]), default: [:]][tier] = name }
        }
        var recovered: [String: RenderedFiles] = [:]
        for (hash, files) in byContent {
            if let files = recover(files, directory: directory) { recovered[hash] = files }
        }
        return recovered
    }

    /// An orphaned photo's files, read back (size, SHA-256, side from the header), when
    /// the largest tier is there; smaller tiers missing from disk share the largest file
    /// only when it is no bigger than they are.
    private func recover(_ files: [Int: String], directory: CacheDirectory) -> RenderedFiles? {
        var result: [String: CacheFile] = [:]
        for tier in configuration.tiers {
            guard let name = files[tier] ?? files.filter({ $0.key > tier }).min(by: { $0.key < $1.key })?.value,
                  let data = FileManager.default.contents(atPath: directory.root.appendingPathComponent(name).path),
                  let side = try? AvatarRenderer.headerSide([UInt8](data)), side <= tier else { return nil }
            result[String(tier)] = CacheFile(filename: name, width: side, height: side, fileSize: Int64(data.count), sha256: SHA256Hex.of([UInt8](data)))
        }
        return RenderedFiles(format: nil, sourceWidth: nil, sourceHeight: nil, files: result, renderedNow: false)
    }
}

