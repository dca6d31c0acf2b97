import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
import Synchronization
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
/// let answer = try await avatars.answer(forUser: "u42", viewSize: 55, scale: 3)
/// if let file = answer.file {
///     // draw the file
/// } else {
///     // draw answer.initials in answer.textColor on answer.color
/// }
/// ```
///
/// Open one per process and share it: it is `Sendable`, and opening is the slow part.
/// An answer is a few indexed reads of the cache's SQLite index (tens of microseconds,
/// `scripts/bench-lookup`) on a reader connection of its own: the lookup keeps a few
/// (one per caller at once, up to `readers`), so callers on several threads or tasks do
/// not queue behind one connection; a warm-up writing the same cache does not wait for
/// them, nor they for the warm-up. The queries are `async`: when every reader is busy
/// they wait without holding a thread of the concurrency pool, and each yields after its
/// read, so that tasks answering in a loop share the pool. Synchronous code (a C
/// callback, a thread of its own) asks the same questions through ``blocking``, under
/// the same names: `try avatars.blocking.answer(forUser: "u42", viewSize: 55, scale: 3)`
/// (no name has a synchronous and an `async` form, so Swift never picks one for you). A
/// lookup counts as an access for the prune: recorded off the caller's path, in batches
/// (``flush()``).
public final class CacheLookup: Sendable {
    /// The cache directory.
    public let cache: URL
    fileprivate let readers: ReaderPool
    fileprivate let recorder: AccessRecorder?

    /// The name of the index in a cache directory.
    public static let indexName = "index.sqlite"

    /// Opens the cache in `cache` (a directory a warm-up wrote; a read-only one works).
    /// - Parameters:
    ///   - recordsAccess: whether lookups count as accesses for the prune (default true;
    ///     a cache this process cannot write records nothing).
    ///   - readers: the reader connections kept open at most, one per lookup under way
    ///     at once (default 16: a server's cores and then some; each is opened when the
    ///     callers at once first need it). A synchronous caller that finds them all busy
    ///     opens one for itself; an `async` one waits for one.
    /// - Throws: ``LookupError/invalidArgument(_:)`` for `readers` below 1,
    ///   ``LookupError/notACache(directory:)``, ``LookupError/needsUpgrade(directory:reason:)``
    ///   (written before the index, or by a version too old to read as it is),
    ///   ``LookupError/damagedIndex(file:reason:)``.
    public init(cache: URL, recordsAccess: Bool = true, readers: Int = 16) throws {
        guard readers > 0 else { throw LookupError.invalidArgument("readers must be at least 1 (got \(readers))") }
        self.cache = cache
        let file = cache.appendingPathComponent(Self.indexName, isDirectory: false)
        guard Self.hasIndex(cache) else {
            if Self.isWrittenBeforeIndex(cache) {
                throw LookupError.needsUpgrade(directory: cache, reason: "was written by avatar-cache before the index (it has only metadata.json)")
            }
            throw LookupError.notACache(directory: cache)
        }
        // The first reader is opened now: a cache that cannot be read fails here.
        self.readers = ReaderPool(first: try IndexReader(file: file, directory: cache), limit: readers) {
            try IndexReader(file: file, directory: cache)
        }
        recorder = recordsAccess ? AccessRecorder(file: file) : nil
    }

    /// Whether `cache` holds an index (an empty file, which SQLite would take for a new
    /// database, does not count).
    static func hasIndex(_ cache: URL) -> Bool {
        var status = stat()
        return stat(cache.appendingPathComponent(indexName, isDirectory: false).path, &status) == 0 && status.st_size > 0
    }

    /// Whether `cache` was written before the index: a `metadata.json` and no index. The
    /// library reads no such cache; `avatar-cache lookup` has the engine import it.
    package static func isWrittenBeforeIndex(_ cache: URL) -> Bool {
        !hasIndex(cache) && access(cache.appendingPathComponent("metadata.json", isDirectory: false).path, F_OK) == 0
    }

    /// Writes the accesses not yet in the index and returns when they are, leaving the
    /// index's log as the lookup found it (folded into the index and emptied, unless
    /// another process is using it).
    deinit { recorder?.finish() }

    /// Records what waits as a process done with the cache does (what the lookup does
    /// when released), and says where it went; nil when this lookup records no accesses.
    package func finishRecording() -> AccessesKept? {
        recorder?.finish()
    }

    /// Returns when the accesses recorded so far are in the index (a test, or a process
    /// about to exit; they are otherwise written within a second). A warm-up holding the
    /// index longer than 10 s leaves them waiting for the next write. The wait (a warm-up's
    /// transaction may hold the index for a while) does not hold one of the concurrency
    /// pool's threads.
    public func flush() async {
        guard let recorder else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            recorder.flush(then: { done.resume() })
        }
    }

    /// What to draw for user `id` in a view of `viewSize` points at `scale` pixels a point
    /// (any density: 1, 1.5, 2.625, 3). When every reader is busy it waits for one without
    /// holding a thread of the concurrency pool.
    /// - Throws: ``LookupError/notFound(_:)`` when the cache holds no such user,
    ///   ``LookupError/invalidArgument(_:)``, ``LookupError/damagedIndex(file:reason:)``.
    public func answer(forUser id: String, viewSize: Double, scale: Double) async throws -> Answer {
        try Self.check(user: id, viewSize: viewSize, scale: scale)
        return recorded(try await readers.withReader { try userAnswer($0, id, viewSize: viewSize, scale: scale) })
    }

    /// What to draw for the photo at `url` (the key the export gave: an http(s) URL, or
    /// `sha256:<hex>` of an inline photo) in a view of `viewSize` points at `scale`.
    /// - Throws: ``LookupError/notFound(_:)`` when no photo of that URL is cached,
    ///   ``LookupError/invalidArgument(_:)``, ``LookupError/damagedIndex(file:reason:)``.
    public func answer(forPhotoURL url: String, viewSize: Double, scale: Double) async throws -> Answer {
        try Self.check(url: url, viewSize: viewSize, scale: scale)
        return recorded(try await readers.withReader { try urlAnswer($0, url, viewSize: viewSize, scale: scale) })
    }

    /// Every tier of what user `id` shows (its photo, else its monogram), smallest first:
    /// the sizes ``tier(forViewSize:scale:available:smallestDecodeSize:)`` chooses from, each with its file.
    /// Empty when nothing is cached for the user yet. Not counted as an access.
    /// - Throws: ``LookupError/notFound(_:)`` when the cache holds no such user.
    public func tiers(forUser id: String) async throws -> [Tier] {
        guard !id.isEmpty else { throw LookupError.invalidArgument("the user id is empty") }
        return try await readers.withReader { try tiers($0, id) }
    }

    /// The users in the cache, by id (byte order), `limit` at a time after `id` (nil: from
    /// the first): `users(after: page.last)` gives the next page, an empty one the end.
    public func users(after id: String? = nil, limit: Int = 1000) async throws -> [String] {
        try Self.check(limit: limit)
        return try await readers.withReader { reader in try reader.read { try reader.userIDs(after: id, limit: limit) } }
    }

    /// The same questions for synchronous code: a C callback, a notification handler, a
    /// thread of its own. Each holds its thread while it reads (tens of microseconds); when
    /// every reader is busy it opens a connection of its own for the read instead of
    /// waiting. In `async` code ask the lookup itself.
    public var blocking: Blocking { Blocking(lookup: self) }

    /// ``CacheLookup``'s questions, answered on the caller's thread (``blocking``).
    public struct Blocking: Sendable {
        let lookup: CacheLookup

        /// ``CacheLookup/answer(forUser:viewSize:scale:)``, on the caller's thread.
        public func answer(forUser id: String, viewSize: Double, scale: Double) throws -> Answer {
            try CacheLookup.check(user: id, viewSize: viewSize, scale: scale)
            return lookup.recorded(try lookup.readers.withReader { try lookup.userAnswer($0, id, viewSize: viewSize, scale: scale) })
        }

        /// ``CacheLookup/answer(forPhotoURL:viewSize:scale:)``, on the caller's thread.
        public func answer(forPhotoURL url: String, viewSize: Double, scale: Double) throws -> Answer {
            try CacheLookup.check(url: url, viewSize: viewSize, scale: scale)
            return lookup.recorded(try lookup.readers.withReader { try lookup.urlAnswer($0, url, viewSize: viewSize, scale: scale) })
        }

        /// ``CacheLookup/tiers(forUser:)``, on the caller's thread.
        public func tiers(forUser id: String) throws -> [Tier] {
            guard !id.isEmpty else { throw LookupError.invalidArgument("the user id is empty") }
            return try lookup.readers.withReader { try lookup.tiers($0, id) }
        }

        /// ``CacheLookup/users(after:limit:)``, on the caller's thread.
        public func users(after id: String? = nil, limit: Int = 1000) throws -> [String] {
            try CacheLookup.check(limit: limit)
            return try lookup.readers.withReader { reader in try reader.read { try reader.userIDs(after: id, limit: limit) } }
        }

        /// ``CacheLookup/flush()``, holding the caller's thread until the accesses are in
        /// the index.
        public func flush() {
            lookup.recorder?.flush()
        }
    }

    private func tiers(_ reader: IndexReader, _ id: String) throws -> [Tier] {
        try reader.read {
            guard let profile = try reader.profile(id: id) else { throw LookupError.notFound(.user(id: id)) }
            guard let entry = try shown(reader, profile)?.entry else { return [] }
            return entry.files.sorted { $0.key < $1.key }.map {
                Tier(pixels: $0.key, side: $0.value.side, file: cache.appendingPathComponent($0.value.name, isDirectory: false))
            }
        }
    }

    /// A tier of an entry: its nominal size in pixels (330, 900: what
    /// ``tier(forViewSize:scale:available:smallestDecodeSize:)`` chooses among), the file's actual side (less
    /// for a photo smaller than the tier, which is never upscaled), the file.
    public struct Tier: Sendable, Equatable, Hashable {
        public var pixels: Int
        public var side: Int
        public var file: URL

        @available(*, deprecated, renamed: "pixels")
        public var tier: Int { pixels }

        public init(pixels: Int, side: Int, file: URL) {
            self.pixels = pixels
            self.side = side
            self.file = file
        }
    }

    fileprivate func userAnswer(_ reader: IndexReader, _ id: String, viewSize: Double, scale: Double) throws -> (Answer, String?) {
        try reader.read {
            guard let profile = try reader.profile(id: id) else { throw LookupError.notFound(.user(id: id)) }
            var answer = Self.answer(for: profile, asked: nil)
            let shown = try shown(reader, profile)
            if let shown { answer.kind = shown.kind }
            fill(&answer, shown?.entry, viewSize: viewSize, scale: scale, smallestDecodeSize: try reader.smallestDecodeSize())
            return (answer, shown?.key)
        }
    }

    /// The entry a profile shows: its photo's, else its monogram's.
    private func shown(_ reader: IndexReader, _ profile: IndexReader.Profile) throws
        -> (key: String, entry: IndexReader.Entry, kind: AvatarKind)? {
        if let photo = profile.photoSource, let entry = try reader.entry(key: photo) { return (photo, entry, .photo) }
        let key = Self.monogram(of: profile).key
        if let entry = try reader.entry(key: key) { return (key, entry, .monogram) }
        return nil
    }

    fileprivate func urlAnswer(_ reader: IndexReader, _ url: String, viewSize: Double, scale: Double) throws -> (Answer, String?) {
        try reader.read {
            guard let entry = try reader.entry(key: url) else { throw LookupError.notFound(.photo(url: url)) }
            var answer = try reader.owner(ofSource: url).map { Self.answer(for: $0, asked: url) } ?? Answer(kind: .photo)
            answer.photoURL = url
            answer.kind = .photo
            fill(&answer, entry, viewSize: viewSize, scale: scale, smallestDecodeSize: try reader.smallestDecodeSize())
            return (answer, url)
        }
    }

    /// The answer, its entry's access recorded.
    fileprivate func recorded(_ answered: (Answer, String?)) -> Answer {
        if let key = answered.1 { recorder?.record(key) }
        return answered.0
    }

    /// What to draw for a user the cache does not hold yet (a message's new sender, before
    /// the next warm): the monogram a warm would give them, from their id and name, and the
    /// colour their source gives when it is a `#RRGGBB` (else the palette's colour for the
    /// id, the one a warm assigns): initials, colour, the text colour on it and a
    /// placeholder of that colour. No file: `kind` is `.notCached`, draw the initials.
    public static func monogram(forUser id: String, displayName: String, colorHex: String? = nil) -> Answer {
        let color = AvatarColor.normalized(colorHex) ?? AvatarColor.paletteColor(forUserID: id)
        return Answer(userID: id, displayName: displayName, initials: Initials.from(displayName: displayName), color: color,
                      textColor: AvatarColor.textColor(on: color), kind: .notCached, placeholder: Placeholder(color: color))
    }

    /// The apps' decode rule: a view of `viewSize` points needs a decode of
    /// max(viewSize × 2, `smallestDecodeSize`) points × `scale` pixels; the smallest tier
    /// at least that large, else the largest. `smallestDecodeSize` is the smallest decode
    /// size the cache's warm was given (`--size`; the answers use the cache's own).
    /// Default 110, the smallest of the default sizes.
    public static func tier(forViewSize viewSize: Double, scale: Double, available: [Int],
                            smallestDecodeSize: Double = defaultSmallestDecodeSize) -> Int? {
        let needed = Int((max(viewSize * 2, smallestDecodeSize) * scale).rounded(.up))
        let sorted = available.sorted()
        return sorted.first { $0 >= needed } ?? sorted.last
    }

    /// The smallest of the warm's default decode sizes (110 and 300 points): the tier
    /// rule's floor for a cache that recorded none.
    public static let defaultSmallestDecodeSize = Double(DecodeSizes.defaultSmallest)

    @available(*, deprecated, renamed: "tier(forViewSize:scale:available:smallestDecodeSize:)")
    public static func tier(forViewPoints points: Double, scale: Double, available: [Int]) -> Int? {
        tier(forViewSize: points, scale: scale, available: available)
    }

    /// The largest view size a lookup takes, in points.
    public static let maximumViewSize = 100_000.0
    /// The pixels per point a lookup takes: any density from 0.5 to 8 (1, 1.5, 2, 2.625,
    /// 3, …).
    public static let scales: ClosedRange<Double> = 0.5...8

    private static func check(user id: String, viewSize: Double, scale: Double) throws {
        try check(viewSize: viewSize, scale: scale)
        guard !id.isEmpty else { throw LookupError.invalidArgument("the user id is empty") }
    }

    private static func check(url: String, viewSize: Double, scale: Double) throws {
        try check(viewSize: viewSize, scale: scale)
        guard !url.isEmpty else { throw LookupError.invalidArgument("the photo URL is empty") }
    }

    private static func check(limit: Int) throws {
        guard limit > 0 else { throw LookupError.invalidArgument("the limit must be above 0 (got \(limit))") }
    }

    /// What `check` refuses of a view size and a scale, in its words; nil when they are in
    /// range (`avatar-cache lookup` says the same of its `--size` and `--scale`).
    package static func problem(viewSize: Double, scale: Double) -> String? {
        if viewSize.isNaN || viewSize <= 0 {
            return "the view size must be a number of points above 0 (got \(number(viewSize)))"
        }
        if viewSize > maximumViewSize {
            return "the view size must be at most \(number(maximumViewSize)) points (got \(number(viewSize)))"
        }
        if !scales.contains(scale) {
            return "the scale must be a number of pixels per point from \(number(scales.lowerBound)) to \(number(scales.upperBound)) (got \(number(scale)))"
        }
        return nil
    }

    private static func check(viewSize: Double, scale: Double) throws {
        if let problem = problem(viewSize: viewSize, scale: scale) { throw LookupError.invalidArgument(problem) }
    }

    /// `100000`, `1.5`, `nan`: a number as it was given, without a `.0` of its own.
    private static func number(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func answer(for profile: IndexReader.Profile, asked url: String?) -> Answer {
        Answer(userID: profile.id, photoURL: profile.photoSource.flatMap { $0.hasPrefix("http") ? $0 : nil },
               displayName: profile.displayName, initials: profile.initials, glyph: profile.glyph,
               color: profile.color, textColor: AvatarColor.textColor(on: profile.color), kind: .notCached)
    }

    private static func monogram(of profile: IndexReader.Profile) -> MonogramSpec {
        MonogramSpec(initials: profile.initials, glyph: profile.glyph, background: profile.color,
                     foreground: AvatarColor.textColor(on: profile.color))
    }

    private func fill(_ answer: inout Answer, _ entry: IndexReader.Entry?, viewSize: Double, scale: Double, smallestDecodeSize: Int) {
        if let entry, entry.kind == .photo {
            answer.placeholder = entry.placeholder
        } else if let color = answer.color {
            answer.placeholder = Placeholder(color: color)
        }
        if let entry, let tier = Self.tier(forViewSize: viewSize, scale: scale, available: Array(entry.files.keys),
                                           smallestDecodeSize: Double(smallestDecodeSize)),
           let file = entry.files[tier] {
            answer.tier = tier
            answer.side = file.side
            answer.file = cache.appendingPathComponent(file.name, isDirectory: false)
        }
    }
}

/// The lookup's reader connections: a caller takes a free one, or opens one more while
/// fewer than `limit` are open; past that a synchronous caller opens one for itself
/// (closed after its read) and an `async` one waits for one to be handed back.
fileprivate final class ReaderPool: Sendable {
    private struct State: ~Copyable {
        var free: [IndexReader]
        var opened: Int
        var waiting: [CheckedContinuation<IndexReader, Never>] = []
    }
    private let state: Mutex<State>
    private let limit: Int
    private let open: @Sendable () throws -> IndexReader

    init(first: IndexReader, limit: Int, open: @escaping @Sendable () throws -> IndexReader) {
        state = Mutex(State(free: [first], opened: 1))
        self.limit = limit
        self.open = open
    }

    /// A free reader; or nil and a promise to open one (counted as open); or nil and no
    /// promise (all `limit` are busy).
    private func take() -> (reader: IndexReader?, mayOpen: Bool) {
        state.withLock { state in
            if let reader = state.free.popLast() { return (reader, false) }
            guard state.opened < limit else { return (nil, false) }
            state.opened += 1
            return (nil, true)
        }
    }

    private func opened() throws -> IndexReader {
        do {
            return try open()
        } catch {
            state.withLock { $0.opened -= 1 }
            throw error
        }
    }

    private func giveBack(_ reader: IndexReader) {
        let waiter = state.withLock { state -> CheckedContinuation<IndexReader, Never>? in
            if !state.waiting.isEmpty { return state.waiting.removeFirst() }
            state.free.append(reader)
            return nil
        }
        waiter?.resume(returning: reader)
    }

    func withReader<T>(_ body: (IndexReader) throws -> T) throws -> T {
        let (free, mayOpen) = take()
        guard let reader = try free ?? (mayOpen ? opened() : nil) else {
            // Every reader is busy: one of this caller's own, for this read.
            return try body(try open())
        }
        defer { giveBack(reader) }
        return try body(reader)
    }

    func withReader<T>(_ body: (IndexReader) throws -> T) async throws -> T {
        let (free, mayOpen) = take()
        let reader: IndexReader
        if let free {
            reader = free
        } else if mayOpen {
            reader = try opened()
        } else {
            reader = await withCheckedContinuation { (handed: CheckedContinuation<IndexReader, Never>) in
                let now = state.withLock { state -> IndexReader? in
                    if let reader = state.free.popLast() { return reader }
                    state.waiting.append(handed)
                    return nil
                }
                if let now { handed.resume(returning: now) }
            }
        }
        let result = Result { try body(reader) }
        giveBack(reader)
        // The read ran on this task's thread of the concurrency pool without suspending:
        // callers answering in a loop would keep the pool's threads and starve every other
        // task. Yielding after each answer (the reader handed back) gives each its share.
        await Task.yield()
        return try result.get()
    }
}
