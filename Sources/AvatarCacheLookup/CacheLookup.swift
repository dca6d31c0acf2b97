import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What to draw for a user: the lookup a notification banner makes for a message's
/// sender, or a server's avatar route.
///
/// ```swift
/// let avatars = try CacheLookup(cache: URL(filePath: "/var/lib/avatar-cache"))
/// let answer = try avatars.answer(forUser: "u42", viewSize: 55, scale: 3)
/// if let file = answer.file {
///     // draw the file
/// } else {
///     // draw answer.initials in answer.textColor on answer.color
/// }
/// ```
///
/// Open one per process and share it: it is `Sendable`, and opening is the slow part.
/// An answer is a few indexed reads of the cache's SQLite index (tens of microseconds,
/// `scripts/bench-lookup`), under a lock held only for them; a warm-up writing the same
/// cache does not wait for it, nor it for the warm-up. A lookup counts as an access for
/// the prune: recorded off the caller's path, in batches (``flush()``).
public final class CacheLookup: Sendable {
    /// The cache directory.
    public let cache: URL
    private let reader: LockedReader
    private let recorder: AccessRecorder?

    /// The name of the index in a cache directory.
    public static let indexName = "index.sqlite"

    /// Opens the cache in `cache` (a directory a warm-up wrote; a read-only one works).
    /// - Parameter recordsAccess: whether lookups count as accesses for the prune
    ///   (default true; a cache this process cannot write records nothing).
    /// - Throws: ``LookupError/notACache(directory:)``, ``LookupError/needsUpgrade(directory:reason:)``
    ///   (written before the index, or by a version too old to read as it is),
    ///   ``LookupError/damagedIndex(file:reason:)``.
    public init(cache: URL, recordsAccess: Bool = true) throws {
        self.cache = cache
        let file = cache.appendingPathComponent(Self.indexName)
        guard Self.hasIndex(cache) else {
            if Self.isWrittenBeforeIndex(cache) {
                throw LookupError.needsUpgrade(directory: cache, reason: "was written by avatar-cache before the index (it has only metadata.json)")
            }
            throw LookupError.notACache(directory: cache)
        }
        reader = LockedReader(try IndexReader(file: file, directory: cache))
        recorder = recordsAccess ? AccessRecorder(file: file) : nil
    }

    /// Whether `cache` holds an index (an empty file, which SQLite would take for a new
    /// database, does not count).
    static func hasIndex(_ cache: URL) -> Bool {
        var status = stat()
        return stat(cache.appendingPathComponent(indexName).path, &status) == 0 && status.st_size > 0
    }

    /// Whether `cache` was written before the index: a `metadata.json` and no index. The
    /// library reads no such cache; `avatar-cache lookup` has the engine import it.
    package static func isWrittenBeforeIndex(_ cache: URL) -> Bool {
        !hasIndex(cache) && access(cache.appendingPathComponent("metadata.json").path, F_OK) == 0
    }

    /// Writes the accesses not yet in the index and returns when they are.
    deinit { recorder?.flush() }

    /// Returns when the accesses recorded so far are in the index (a test, or a process
    /// about to exit; they are otherwise written within a second). A warm-up holding the
    /// index longer than 10 s leaves them waiting for the next write.
    public func flush() {
        recorder?.flush()
    }

    /// ``flush()`` for an `async` caller: the wait (a warm-up's transaction may hold the
    /// index for a while) does not hold one of the concurrency pool's threads.
    public func flush() async {
        guard let recorder else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            recorder.flush(then: { done.resume() })
        }
    }

    /// What to draw for user `id` in a view of `viewSize` points at `scale` pixels a point.
    /// - Throws: ``LookupError/notFound(_:)`` when the cache holds no such user,
    ///   ``LookupError/invalidArgument(_:)``, ``LookupError/damagedIndex(file:reason:)``.
    public func answer(forUser id: String, viewSize: Double, scale: Int) throws -> Answer {
        try check(viewSize: viewSize, scale: scale)
        guard !id.isEmpty else { throw LookupError.invalidArgument("the user id is empty") }
        let (answer, key) = try reader.withReader { reader -> (Answer, String?) in
            try reader.read {
                guard let profile = try reader.profile(id: id) else { throw LookupError.notFound("user \"\(id)\"") }
                var answer = Self.answer(for: profile, asked: nil)
                var shown: (key: String, entry: IndexReader.Entry)?
                if let photo = profile.photoSource, let entry = try reader.entry(key: photo) {
                    shown = (photo, entry)
                    answer.kind = .photo
                } else {
                    let key = Self.monogram(of: profile).key
                    if let entry = try reader.entry(key: key) {
                        shown = (key, entry)
                        answer.kind = .monogram
                    }
                }
                fill(&answer, shown?.entry, viewSize: viewSize, scale: scale)
                return (answer, shown?.key)
            }
        }
        if let key { recorder?.record(key) }
        return answer
    }

    /// What to draw for the photo at `url` (the key the export gave: an http(s) URL, or
    /// `sha256:<hex>` of an inline photo) in a view of `viewSize` points at `scale`.
    /// - Throws: ``LookupError/notFound(_:)`` when no photo of that URL is cached,
    ///   ``LookupError/invalidArgument(_:)``, ``LookupError/damagedIndex(file:reason:)``.
    public func answer(forPhotoURL url: String, viewSize: Double, scale: Int) throws -> Answer {
        try check(viewSize: viewSize, scale: scale)
        guard !url.isEmpty else { throw LookupError.invalidArgument("the photo URL is empty") }
        let answer = try reader.withReader { reader -> Answer in
            try reader.read {
                guard let entry = try reader.entry(key: url) else { throw LookupError.notFound("URL \(shownURL(url))") }
                var answer = try reader.owner(ofSource: url).map { Self.answer(for: $0, asked: url) } ?? Answer(kind: .photo)
                answer.photoURL = url
                answer.kind = .photo
                fill(&answer, entry, viewSize: viewSize, scale: scale)
                return answer
            }
        }
        recorder?.record(url)
        return answer
    }

    /// The apps' decode rule: a view of `points` needs a decode of max(points × 2, 110)
    /// points × `scale` pixels; the smallest tier at least that large, else the largest.
    public static func tier(forViewPoints points: Double, scale: Int, available: [Int]) -> Int? {
        let needed = Int((max(points * 2, 110) * Double(scale)).rounded(.up))
        let sorted = available.sorted()
        return sorted.first { $0 >= needed } ?? sorted.last
    }

    /// The largest view size a lookup takes, in points.
    public static let maximumViewSize = 100_000.0
    /// The pixels per point a lookup takes.
    public static let scales = 1...8

    private func check(viewSize: Double, scale: Int) throws {
        guard viewSize.isFinite, viewSize > 0, viewSize <= Self.maximumViewSize else {
            throw LookupError.invalidArgument("the view size must be a number of points above 0 (got \(viewSize))")
        }
        guard Self.scales.contains(scale) else {
            throw LookupError.invalidArgument("the scale must be between \(Self.scales.lowerBound) and \(Self.scales.upperBound) (got \(scale))")
        }
    }

    private static func answer(for profile: IndexReader.Profile, asked url: String?) -> Answer {
        Answer(userID: profile.id, photoURL: profile.photoSource.flatMap { $0.hasPrefix("http") ? $0 : nil },
               displayName: profile.displayName, initials: profile.initials, glyph: profile.glyph,
               color: profile.color, textColor: AvatarColor.textColor(on: profile.color), kind: .none)
    }

    private static func monogram(of profile: IndexReader.Profile) -> MonogramSpec {
        MonogramSpec(initials: profile.initials, glyph: profile.glyph, background: profile.color,
                     foreground: AvatarColor.textColor(on: profile.color))
    }

    private func fill(_ answer: inout Answer, _ entry: IndexReader.Entry?, viewSize: Double, scale: Int) {
        if let entry, entry.kind == .photo {
            answer.placeholder = entry.placeholder
        } else if let color = answer.color {
            answer.placeholder = Placeholder(color: color)
        }
        if let entry, let tier = Self.tier(forViewPoints: viewSize, scale: scale, available: Array(entry.files.keys)),
           let file = entry.files[tier] {
            answer.tier = tier
            answer.side = file.side
            answer.file = cache.appendingPathComponent(file.name)
        }
    }
}

/// The reader under a lock: SQLite's connection and its statements are one caller's at
/// a time.
private final class LockedReader: @unchecked Sendable {
    private let lock = PlainLock()
    private let reader: IndexReader

    init(_ reader: IndexReader) { self.reader = reader }

    func withReader<T>(_ body: (IndexReader) throws -> T) throws -> T {
        try lock.withLock { try body(reader) }
    }
}
