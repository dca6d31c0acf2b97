import AvatarCacheImaging
import AvatarCacheStore
import AvatarCacheMonograms
import AvatarCacheSupport
import Foundation
import Synchronization

/// Renders a photo or a monogram and writes its tier files, on one decode pool thread,
/// in one hand-off: a file is written to the page cache under a temporary name and
/// renamed (tens of microseconds, no `fsync`), and is made durable with the batch's
/// others by one `syncfs` on a file pool thread (`flush`), where the wait for the disk
/// leaves no decode thread idle. Both are threads we own, so the blocking calls stay off
/// the cooperative pool. The exception is an account photo, a fraction of a millisecond
/// with nothing to wait for: it is made in the calling task, by one cooperative thread
/// at a time (`inlinePlaces`), so that the others stay free for the network and the
/// timers (a thread the cooperative pool queues behind renders runs nothing else), and
/// only while such renders take under 2 ms (a build without optimisation, or a machine
/// that slow, sends them to the decode threads). Its one small file is written there too:
/// a write the kernel holds back (dirty pages while the batch's `syncfs` runs) holds that
/// one thread, not the others.
struct RenderWriter: Sendable {
    let renderer: AvatarRenderer
    let monograms: MonogramRenderer
    let directory: CacheDirectory
    /// Decodes, one image a thread (with the decode memory gate).
    let decoders: DecodeWorkerPool
    /// Writes the files (temporary file, rename; made durable a batch at a time by `flush`).
    let files: DecodeWorkerPool
    /// Account photos being made in calling tasks: at most one fewer than the cooperative
    /// threads (one at least) and no more than `--decode-threads`; the others go to the
    /// decode threads.
    let inlinePlaces: InlinePlaces

    init(renderer: AvatarRenderer, monograms: MonogramRenderer, directory: CacheDirectory,
         decoders: DecodeWorkerPool, files: DecodeWorkerPool) {
        self.renderer = renderer
        self.monograms = monograms
        self.directory = directory
        self.decoders = decoders
        self.files = files
        inlinePlaces = InlinePlaces(limit: max(1, min(decoders.threadCount, ProcessInfo.processInfo.activeProcessorCount - 1)))
    }

    final class InlinePlaces: Sendable {
        private let places: Places
        /// The recent renders' mean (nanoseconds, a running mean of eight), and the calls
        /// turned away while it is over `slowest`: every 64th tries again, to follow it.
        private let mean = Atomic<Int>(0)
        private let turnedAway = Atomic<Int>(0)
        static let slowest = 2_000_000

        init(limit: Int) { places = Places(limit) }

        func take() -> Bool {
            if mean.load(ordering: .relaxed) > Self.slowest,
               turnedAway.wrappingAdd(1, ordering: .relaxed).newValue % 64 != 0 { return false }
            return places.take()
        }

        func release() { places.release() }

        /// A render made in place took `nanoseconds`.
        func took(_ nanoseconds: UInt64) {
            let old = mean.load(ordering: .relaxed), new = Int(clamping: nanoseconds)
            mean.store(old == 0 ? new : (old * 7 + new) / 8, ordering: .relaxed)
        }
    }

    /// `inline`: the export carried the bytes (an address book may carry TIFF).
    func renderPhoto(_ bytes: [UInt8], contentSHA256: String, inline: Bool = false) async throws -> RenderedFiles {
        // An account photo is made where its bytes are, in the calling task: its decode,
        // encode and one small file write take less CPU than handing it to a decode thread
        // and back (docs/performance-notes.md, "An account photo in one call").
        var tried = false
        if inlinePlaces.take() {
            defer { inlinePlaces.release() }
            tried = true
            let started = DispatchTime.now().uptimeNanoseconds
            if let avatar = renderer.renderAccountPhoto(bytes) {
                let files = try write(avatar.tiers, contentSHA256: contentSHA256, format: renderer.outputFormat)
                // Its time joins the decode threads' mean, which sizes the requests window.
                let took = DispatchTime.now().uptimeNanoseconds - started
                decoders.count(jobOf: took)
                inlinePlaces.took(took)
                return rendered(avatar, files)
            }
        }
        let (avatar, written) = try await draw { [tried] in
            let avatar = try renderer.render(bytes, inline: inline, accountPhotoTried: tried)
            return (avatar, try write(avatar.tiers, contentSHA256: contentSHA256, format: renderer.outputFormat))
        }
        return rendered(avatar, written)
    }

    private func rendered(_ avatar: RenderedAvatar, _ written: [String: CacheFile]) -> RenderedFiles {
        var rendered = RenderedFiles(format: avatar.format, sourceWidth: avatar.sourceWidth, sourceHeight: avatar.sourceHeight, files: written, renderedNow: true)
        rendered.warning = avatar.warning
        rendered.placeholder = avatar.placeholder
        return rendered
    }

    func renderMonogram(_ spec: MonogramSpec, contentSHA256: String) async throws -> RenderedFiles {
        let written = try await draw { try write(try monograms.render(spec), contentSHA256: contentSHA256, format: monograms.outputFormat) }
        // Its placeholder (its colour) is set where every monogram entry is made.
        return RenderedFiles(format: nil, sourceWidth: nil, sourceHeight: nil, files: written, renderedNow: true)
    }

    /// `work` on a decode thread; an imaging error is the source's failure (an error of
    /// the cache's own files is thrown as it is, and ends the run).
    private func draw<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await decoders.run {
            do {
                return try work()
            } catch let error as ImagingError {
                throw SourceFailure(error)
            }
        }
    }

    /// Makes the files written so far durable, with the renames that named them (one
    /// `syncfs`, on a file thread): called before the index commit that references them,
    /// so the index never names a file a power cut could lose.
    func flush() async throws {
        try await files.run { try directory.syncFilesystem() }
    }

    /// Writes each tier; takes tiers smallest first.
    private func write(_ tiers: [RenderedTier], contentSHA256: String, format: OutputFormat) throws -> [String: CacheFile] {
        var files: [String: CacheFile] = [:]
        var larger: CacheFile?
        for tier in tiers.reversed() {
            // A source smaller than a tier is not upscaled, so two tiers can come out
            // the same: the smaller one then shares the larger one's file.
            if let larger, larger.width == tier.side {
                files[String(tier.tier)] = larger
                continue
            }
            let name = CacheDirectory.fileName(contentSHA256: contentSHA256, tier: tier.tier, format: format)
            try directory.writeAtomically(tier.bytes, to: name, durable: false)
            let file = CacheFile(filename: name, width: tier.side, height: tier.side, fileSize: Int64(tier.bytes.count),
                                 sha256: SHA256Hex.of(tier.bytes))
            files[String(tier.tier)] = file
            larger = file
        }
        return files
    }
}
