import Foundation
import Testing
@testable import AvatarCacheLookup
import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheTestKit

/// The apps' library over a real index (SQLite, files on disk), written row by row
/// (`LookupIndex`): the answers for users and photo URLs, the tier a view needs, the users
/// a page at a time, an entry's tiers, the async answers, accesses recorded for the
/// prune, and every way a directory is not a cache it can read.
@Suite struct CacheLookupTests {
    /// A scratch cache and its index (`remove()` when done).
    final class Cache {
        let directory: URL
        let index: LookupIndex

        init(_ label: String, placeholders: Bool = true) throws {
            directory = try Fixtures.temporaryDirectory(label).appendingPathComponent("cache")
            index = try LookupIndex(in: directory, placeholders: placeholders)
        }

        func remove() {
            index.close()
            try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
        }
    }

    static let photoURL = "https://photos.example.com/pat.jpg"

    /// Pat with a photo (three tiers), Lee with a monogram, Kim with a photo not cached yet
    /// and no monogram either, Gus shown as a glyph.
    static func people(_ label: String) throws -> (Cache, [Int: URL], [Int: URL]) {
        let cache = try Cache(label)
        try cache.index.addProfile(id: "pat", displayName: "Pat Doe", initials: "PD", color: "#007AFF", photoSource: photoURL)
        let photo = try cache.index.addEntry(key: photoURL, kind: "photo", tiers: [110: 110, 330: 330, 900: 640],
                                             placeholderHash: "1QcSHQRnh493V4dIh4eXh1h4kJUI", placeholderColor: "#7A6B5C")
        try cache.index.addProfile(id: "lee", displayName: "Lee", initials: "LE", color: "#FF9500")
        let monogram = MonogramSpec(initials: "LE", glyph: nil, background: "#FF9500", foreground: AvatarColor.textColor(on: "#FF9500"))
        let drawn = try cache.index.addEntry(key: monogram.key, kind: "monogram", tiers: [330: 330, 900: 900])
        try cache.index.addProfile(id: "kim", displayName: "Kim Ray", initials: "KR", color: "#34C759",
                                   photoSource: "https://photos.example.com/missing.jpg")
        try cache.index.addProfile(id: "gus", displayName: "", initials: "", glyph: "person", color: "#5856D6")
        let glyph = MonogramSpec(initials: "", glyph: .person, background: "#5856D6", foreground: AvatarColor.textColor(on: "#5856D6"))
        try cache.index.addEntry(key: glyph.key, kind: "monogram", tiers: [330: 330])
        return (cache, photo, drawn)
    }

    @Test func aPhotoIsAnsweredAtTheSmallestTierTheViewNeeds() throws {
        let (cache, photo, _) = try Self.people("lookup-photo")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)

        // 150 pt at 3×: 900 px needed; 15 pt: at least 110 pt × 3 = 330; 15 pt at 1×: 110.
        let large = try lookup.blocking.answer(forUser: "pat", viewSize: 150, scale: 3)
        #expect(large.kind == .photo && large.tier == 900 && large.side == 640 && large.file == photo[900])
        #expect(large.userID == "pat" && large.photoURL == Self.photoURL && large.displayName == "Pat Doe" && large.initials == "PD")
        #expect(large.color == "#007AFF" && large.textColor == AvatarColor.textColor(on: "#007AFF") && large.glyph == nil)
        #expect(large.placeholder == Placeholder(thumbHash: "1QcSHQRnh493V4dIh4eXh1h4kJUI", color: "#7A6B5C"))
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 15, scale: 3).tier == 330)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 15, scale: 1).tier == 110)
        // Any density: 15 pt at 1.5× needs 110 pt × 1.5 = 165 px (the 330 tier); at 2.625×
        // (an Android xxhdpi-ish screen) 289 px.
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 15, scale: 1.5).tier == 330)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 55, scale: 2.625).tier == 330)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 15, scale: 0.75).tier == 110)
        // Larger than the largest tier: the largest.
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 2000, scale: 8).tier == 900)
        #expect(FileManager.default.fileExists(atPath: try #require(large.file).path))
    }

    @Test func withoutAPhotoTheMonogramAndWithoutEitherNothing() throws {
        let (cache, _, drawn) = try Self.people("lookup-monogram")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)

        let lee = try lookup.blocking.answer(forUser: "lee", viewSize: 55, scale: 3)
        #expect(lee.kind == .monogram && lee.tier == 330 && lee.file == drawn[330] && lee.photoURL == nil)
        #expect(lee.placeholder == Placeholder(color: "#FF9500"), "a monogram's placeholder is its colour")
        // The photo is not cached and no monogram was drawn: nothing to draw but the
        // initials, the URL still told.
        let kim = try lookup.blocking.answer(forUser: "kim", viewSize: 55, scale: 3)
        #expect(kim.kind == .notCached && kim.file == nil && kim.tier == nil && kim.initials == "KR")
        #expect(kim.photoURL == "https://photos.example.com/missing.jpg" && kim.placeholder == Placeholder(color: "#34C759"))
        let gus = try lookup.blocking.answer(forUser: "gus", viewSize: 55, scale: 3)
        #expect(gus.kind == .monogram && gus.glyph == .person && gus.initials == "" && gus.file != nil)
    }

    @Test func aPhotoURLIsAnsweredForTheFirstUserByIdWhoseItIs() throws {
        let cache = try Cache("lookup-url")
        defer { cache.remove() }
        let shared = "https://photos.example.com/team.jpg"
        try cache.index.addProfile(id: "zed", displayName: "Zed", initials: "ZE", color: "#FF2D55", photoSource: shared)
        try cache.index.addProfile(id: "amy", displayName: "Amy", initials: "AM", color: "#30B0C7", photoSource: shared)
        try cache.index.addEntry(key: shared, kind: "photo", tiers: [330: 330], placeholderColor: "#102030")
        let inline = "sha256:" + String(repeating: "ab", count: 32)
        try cache.index.addEntry(key: inline, kind: "photo", tiers: [330: 300])
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)

        let team = try lookup.blocking.answer(forPhotoURL: shared, viewSize: 55, scale: 3)
        #expect(team.userID == "amy" && team.color == "#30B0C7" && team.kind == .photo && team.photoURL == shared)
        #expect(team.placeholder == Placeholder(color: "#102030"))
        // An entry no profile shows: the photo alone.
        let orphan = try lookup.blocking.answer(forPhotoURL: inline, viewSize: 55, scale: 3)
        #expect(orphan.userID == nil && orphan.kind == .photo && orphan.side == 300 && orphan.photoURL == inline)
        #expect(throws: LookupError.notFound(.photo(url: "https://photos.example.com/other.jpg"))) {
            try lookup.blocking.answer(forPhotoURL: "https://photos.example.com/other.jpg", viewSize: 55, scale: 3)
        }
        #expect(throws: LookupError.notFound(.user(id: "nobody"))) { try lookup.blocking.answer(forUser: "nobody", viewSize: 55, scale: 3) }
    }

    @Test func argumentsOutOfRangeAreRefused() async throws {
        let (cache, _, _) = try Self.people("lookup-arguments")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
        func refused(_ body: () throws -> Any) -> Bool {
            do { _ = try body(); return false } catch LookupError.invalidArgument { return true } catch { return false }
        }
        for size in [0, -1, .nan, .infinity, CacheLookup.maximumViewSize + 1] {
            #expect(refused { try lookup.blocking.answer(forUser: "pat", viewSize: size, scale: 3) }, "view size \(size)")
        }
        for scale in [0, 0.4, 8.5, 9, -3, .nan] {
            #expect(refused { try lookup.blocking.answer(forPhotoURL: Self.photoURL, viewSize: 55, scale: scale) }, "scale \(scale)")
        }
        #expect(refused { try lookup.blocking.answer(forUser: "", viewSize: 55, scale: 3) })
        #expect(refused { try lookup.blocking.answer(forPhotoURL: "", viewSize: 55, scale: 3) })
        #expect(refused { try lookup.blocking.tiers(forUser: "") })
        #expect(refused { try lookup.blocking.users(limit: 0) })
        #expect(!refused { try lookup.blocking.answer(forUser: "pat", viewSize: CacheLookup.maximumViewSize, scale: 8) })
        // Each refusal says which bound was passed, and the number as it was given.
        #expect(throws: LookupError.invalidArgument("the view size must be at most 100000 points (got 100001)")) {
            try lookup.blocking.answer(forUser: "pat", viewSize: 100_001, scale: 3)
        }
        await #expect(throws: LookupError.invalidArgument("the view size must be at most 100000 points (got 100001)")) {
            try await lookup.answer(forUser: "pat", viewSize: 100_001, scale: 3)
        }
        #expect(throws: LookupError.invalidArgument("the view size must be a number of points above 0 (got -1.5)")) {
            try lookup.blocking.answer(forUser: "pat", viewSize: -1.5, scale: 3)
        }
        #expect(throws: LookupError.invalidArgument("the scale must be a number of pixels per point from 0.5 to 8 (got 8.5)")) {
            try lookup.blocking.answer(forUser: "pat", viewSize: 55, scale: 8.5)
        }
        #expect(throws: LookupError.invalidArgument("readers must be at least 1 (got 0)")) {
            try CacheLookup(cache: cache.directory, readers: 0)
        }
    }

    @Test func theTierRule() {
        // max(points × 2, 110) × scale, the smallest tier at least that, else the largest.
        #expect(CacheLookup.tier(forViewSize: 10, scale: 1, available: [900, 110, 330]) == 110)
        #expect(CacheLookup.tier(forViewSize: 56, scale: 1, available: [110, 330]) == 330)
        #expect(CacheLookup.tier(forViewSize: 165, scale: 1, available: [110, 330]) == 330)
        #expect(CacheLookup.tier(forViewSize: 165.5, scale: 1, available: [110, 330]) == 330, "the largest")
        #expect(CacheLookup.tier(forViewSize: 55, scale: 2, available: [110, 220, 330]) == 220)
        #expect(CacheLookup.tier(forViewSize: 55, scale: 3, available: []) == nil)
        // Any density: 1.5× needs 165 px for 55 pt, 2.625× 288.75 (289) px.
        #expect(CacheLookup.tier(forViewSize: 55, scale: 1.5, available: [110, 165, 330]) == 165)
        #expect(CacheLookup.tier(forViewSize: 55, scale: 2.625, available: [288, 289, 330]) == 289)
        // From another smallest decode size: 64 pt at 3× is 192 px, where 110 pt needs 330.
        #expect(CacheLookup.tier(forViewSize: 20, scale: 3, available: [192, 330, 600], smallestDecodeSize: 64) == 192)
        #expect(CacheLookup.tier(forViewSize: 20, scale: 3, available: [192, 330, 600]) == 330)
        #expect(CacheLookup.tier(forViewSize: 40, scale: 3, available: [192, 330, 600], smallestDecodeSize: 64) == 330)
    }

    /// The rule's floor is the smallest decode size the cache's warm was given (its
    /// `decodeSizes` setting), not the default sizes' 110: a cache warmed with `--size 64
    /// --size 200 --scale 2 --scale 3` answers a 20 pt view at 3× with its 192 px tier, and
    /// at 2× with 128; without the setting (an older cache) the floor is 110.
    @Test func theTierRuleStartsFromTheCachesOwnSmallestDecodeSize() throws {
        let cache = try Cache("lookup-decode-sizes")
        defer { cache.remove() }
        try cache.index.addProfile(id: "pat", displayName: "Pat Doe", initials: "PD", color: "#007AFF", photoSource: Self.photoURL)
        try cache.index.addEntry(key: Self.photoURL, kind: "photo", tiers: [128: 128, 192: 192, 400: 400, 600: 600])
        func tier(_ viewSize: Double, _ scale: Double) throws -> Int? {
            // A new lookup each time: the setting is read with each answer, as a warm may change it.
            let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
            return try lookup.blocking.answer(forUser: "pat", viewSize: viewSize, scale: scale).tier
        }
        #expect(try tier(20, 3) == 400, "no setting: max(40, 110) × 3 = 330 px, the 400 tier")
        try cache.index.execute("CREATE TABLE cacheSetting (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        #expect(try tier(20, 3) == 400, "a table without the setting: the same")
        try cache.index.execute("INSERT INTO cacheSetting (name, value) VALUES ('decodeSizes', '64,200')")
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 20, scale: 3).tier == 192)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 20, scale: 2).tier == 128)
        #expect(try lookup.blocking.answer(forPhotoURL: Self.photoURL, viewSize: 20, scale: 3).tier == 192)
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 100, scale: 3).tier == 600)
        // Changed by a later warm: the open lookup answers by the new sizes.
        try cache.index.execute("UPDATE cacheSetting SET value = '110,300' WHERE name = 'decodeSizes'")
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 20, scale: 3).tier == 400)
    }

    @Test func usersComeAPageAtATimeInByteOrder() throws {
        let cache = try Cache("lookup-users")
        defer { cache.remove() }
        let ids = ["b", "B", "a", "é", "a b", "10", "9", "zz", "ä"]
        for id in ids { try cache.index.addProfile(id: id, displayName: id, initials: "", color: "#007AFF") }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)

        var listed: [String] = []
        var page = try lookup.blocking.users(limit: 2)
        var pages = 0
        while !page.isEmpty {
            #expect(page.count <= 2)
            listed += page
            pages += 1
            page = try lookup.blocking.users(after: page.last, limit: 2)
        }
        #expect(listed == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(pages == 5)
        #expect(try lookup.blocking.users() == listed, "the default page holds them all")
        #expect(listed.suffix(3) == ["zz", "ä", "é"], "UTF-8's order, not a locale's")
        #expect(try lookup.blocking.users(after: "é").isEmpty && lookup.blocking.users(after: "a", limit: 1) == ["a b"])
        let none = try Cache("lookup-no-users")
        defer { none.remove() }
        #expect(try CacheLookup(cache: none.directory, recordsAccess: false).blocking.users().isEmpty)
    }

    @Test func anEntrysTiersSmallestFirstWithTheirFiles() throws {
        let (cache, photo, drawn) = try Self.people("lookup-tiers")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory)

        #expect(try lookup.blocking.tiers(forUser: "pat") == [
            CacheLookup.Tier(pixels: 110, side: 110, file: try #require(photo[110])),
            CacheLookup.Tier(pixels: 330, side: 330, file: try #require(photo[330])),
            CacheLookup.Tier(pixels: 900, side: 640, file: try #require(photo[900])),
        ])
        #expect(try lookup.blocking.tiers(forUser: "lee").map(\.file) == [drawn[330], drawn[900]])
        #expect(try lookup.blocking.tiers(forUser: "kim").isEmpty, "nothing cached yet")
        #expect(throws: LookupError.notFound(.user(id: "nobody"))) { try lookup.blocking.tiers(forUser: "nobody") }
        // Listing is not an access: the prune's order stays.
        lookup.blocking.flush()
        #expect(try cache.index.lastAccess(of: Self.photoURL) == 1_000)
    }

    /// Every question has an `async` form (the lookup's own) and a synchronous one
    /// (`blocking`), and the two answer the same.
    @Test func theAsyncFormsAnswerAsTheBlockingOnes() async throws {
        let (cache, _, _) = try Self.people("lookup-async-forms")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
        let tiers = try await lookup.tiers(forUser: "pat")
        #expect(tiers.map(\.pixels) == [110, 330, 900])
        #expect(try tiers == lookup.blocking.tiers(forUser: "pat"))
        #expect(try await lookup.tiers(forUser: "kim").isEmpty)
        await #expect(throws: LookupError.notFound(.user(id: "nobody"))) { try await lookup.tiers(forUser: "nobody") }
        await #expect(throws: LookupError.self) { try await lookup.tiers(forUser: "") }
        let users = try await lookup.users()
        #expect(try !users.isEmpty && users == lookup.blocking.users())
        #expect(try await lookup.users(after: users.first, limit: 1) == [users[1]])
        await #expect(throws: LookupError.invalidArgument("the limit must be above 0 (got 0)")) { try await lookup.users(limit: 0) }
        for user in users {
            let answered = try await lookup.answer(forUser: user, viewSize: 55, scale: 2.625)
            #expect(try answered == lookup.blocking.answer(forUser: user, viewSize: 55, scale: 2.625), "\(user)")
        }
        let byURL = try await lookup.answer(forPhotoURL: Self.photoURL, viewSize: 55, scale: 1.5)
        #expect(try byURL == lookup.blocking.answer(forPhotoURL: Self.photoURL, viewSize: 55, scale: 1.5))
        await lookup.flush()
        lookup.blocking.flush()
    }

    @Test func anAnswerIsAnAccessWrittenInTheBackgroundAndNotWhenAsked() async throws {
        let (cache, _, _) = try Self.people("lookup-access")
        defer { cache.remove() }
        let monogram = MonogramSpec(initials: "LE", glyph: nil, background: "#FF9500", foreground: AvatarColor.textColor(on: "#FF9500")).key
        let started = Date().timeIntervalSince1970

        let quiet = try CacheLookup(cache: cache.directory, recordsAccess: false)
        _ = try await quiet.answer(forUser: "pat", viewSize: 55, scale: 3)
        await quiet.flush()
        #expect(try cache.index.lastAccess(of: Self.photoURL) == 1_000, "recordsAccess: false records nothing")

        let lookup = try CacheLookup(cache: cache.directory)
        _ = try await lookup.answer(forUser: "pat", viewSize: 55, scale: 3)
        _ = try await lookup.answer(forUser: "lee", viewSize: 55, scale: 3)
        _ = try await lookup.answer(forUser: "kim", viewSize: 55, scale: 3)   // nothing shown: nothing to record
        await lookup.flush()
        #expect(try #require(try cache.index.lastAccess(of: Self.photoURL)) >= started.rounded(.down))
        #expect(try #require(try cache.index.lastAccess(of: monogram)) >= started.rounded(.down))
        // By URL too, and a later access never moves it back.
        let before = try #require(try cache.index.lastAccess(of: Self.photoURL))
        _ = try await lookup.answer(forPhotoURL: Self.photoURL, viewSize: 55, scale: 3)
        await lookup.flush()
        #expect(try #require(try cache.index.lastAccess(of: Self.photoURL)) >= before)
    }

    /// Tasks sharing one lookup, more of them than its readers: every async answer is the
    /// synchronous one, and an unknown user fails in the same words.
    @Test(arguments: [1, 2, 16])
    func asyncAnswersFromManyTasksAreTheSynchronousOnes(readers: Int) async throws {
        let (cache, _, _) = try Self.people("lookup-tasks")
        defer { cache.remove() }
        for index in 0..<40 {
            let url = "https://photos.example.com/\(index).jpg"
            try cache.index.addProfile(id: "user-\(index)", displayName: "User \(index)", initials: "U\(index % 10)", color: "#AF52DE",
                                       photoSource: index % 3 == 0 ? nil : url)
            if index % 3 != 0 { try cache.index.addEntry(key: url, kind: "photo", tiers: [330: 330, 900: 900]) }
        }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false, readers: readers)
        let ids = try lookup.blocking.users()
        #expect(ids.count == 44)
        let expected = try Dictionary(uniqueKeysWithValues: ids.map { id in (id, try lookup.blocking.answer(forUser: id, viewSize: 55, scale: 3)) })
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<60 {
                        let id = ids[(task * 11 + round) % ids.count]
                        if try await lookup.answer(forUser: id, viewSize: 55, scale: 3) != expected[id] { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        await #expect(throws: LookupError.notFound(.user(id: "nobody"))) { try await lookup.answer(forUser: "nobody", viewSize: 55, scale: 3) }
        let byURL = try await lookup.answer(forPhotoURL: "https://photos.example.com/1.jpg", viewSize: 55, scale: 3)
        #expect(byURL.userID == "user-1" && byURL.kind == .photo)
    }

    /// Tasks answering in a loop, more of them than the concurrency pool has threads: each
    /// gets its share (at least a fifth of the mean), as a server's requests would.
    @Test func tasksAnsweringInALoopEachGetTheirShare() async throws {
        let (cache, _, _) = try Self.people("lookup-fair")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
        let tasks = max(8, ProcessInfo.processInfo.activeProcessorCount * 4)
        let end = Date().addingTimeInterval(1)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var answers = 0
                    while Date() < end {
                        _ = try await lookup.answer(forUser: "pat", viewSize: 55, scale: 3)
                        answers += 1
                    }
                    return answers
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let mean = Double(counts.reduce(0, +)) / Double(counts.count)
        #expect(mean > 100, "\(counts)")
        #expect(counts.allSatisfy { Double($0) >= mean / 5 }, "answers per task: \(counts.sorted())")
    }

    /// A lookup released (a process ending) waits for nothing, a warm-up holding the
    /// index's write lock or not: its access goes to the cache's journal, which the next
    /// write folds in (here a library reader's batch, `flush`).
    @Test func anAccessTheIndexCannotTakeNowIsJournaledAndFoldedByTheNextWrite() throws {
        let (cache, _, _) = try Self.people("lookup-journal")
        defer { cache.remove() }
        let journal = cache.directory.appendingPathComponent(AccessJournal.fileName).path
        let started = Date().timeIntervalSince1970
        try cache.index.execute("BEGIN IMMEDIATE")
        var busy: CacheLookup? = try CacheLookup(cache: cache.directory)
        #expect(try busy?.blocking.answer(forUser: "pat", viewSize: 55, scale: 3).kind == .photo)
        let releasing = Date()
        busy = nil
        #expect(Date().timeIntervalSince(releasing) < 2, "not the busy timeout of 10 s")
        try cache.index.execute("COMMIT")
        #expect(FileManager.default.fileExists(atPath: journal), "the access waits in the journal")
        #expect(try cache.index.lastAccess(of: Self.photoURL) == 1_000)

        // Released with the index free, a lookup that has not written journals too.
        var quick: CacheLookup? = try CacheLookup(cache: cache.directory)
        #expect(try quick?.blocking.answer(forUser: "kim", viewSize: 55, scale: 3).kind == .notCached)
        quick = nil
        #expect(try cache.index.lastAccess(of: Self.photoURL) == 1_000, "the journal is small: left for a write")

        var next: CacheLookup? = try CacheLookup(cache: cache.directory)
        #expect(try next?.blocking.answer(forUser: "lee", viewSize: 55, scale: 3).kind == .monogram)
        next?.blocking.flush()
        #expect(try #require(try cache.index.lastAccess(of: Self.photoURL)) >= started.rounded(.down), "folded in")
        next = nil
        #expect(!FileManager.default.fileExists(atPath: journal))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache.directory.path).filter { $0.contains("journal") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// A writer's open transaction holds no reader back: a lookup answers from the last
    /// commit, then sees the next one.
    @Test func aWriteUnderWayHoldsNoAnswerBack() throws {
        let (cache, _, _) = try Self.people("lookup-writer")
        defer { cache.remove() }
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)
        try cache.index.execute("BEGIN IMMEDIATE; UPDATE profile SET displayName = 'Pat Renamed' WHERE id = 'pat'")
        let started = Date()
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 55, scale: 3).displayName == "Pat Doe")
        #expect(Date().timeIntervalSince(started) < 5, "not the busy timeout")
        try cache.index.execute("COMMIT")
        #expect(try lookup.blocking.answer(forUser: "pat", viewSize: 55, scale: 3).displayName == "Pat Renamed")
    }

    @Test func whatIsNotACacheItCanReadIsSaidSo() throws {
        let scratch = try Fixtures.temporaryDirectory("lookup-not-a-cache")
        defer { try? FileManager.default.removeItem(at: scratch) }
        func directory(_ name: String) throws -> URL {
            let url = scratch.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }
        func opened(_ url: URL) -> LookupError? {
            do { _ = try CacheLookup(cache: url); return nil } catch let error as LookupError { return error } catch { return nil }
        }

        let empty = try directory("empty")
        #expect(opened(empty) == .notACache(directory: empty))
        #expect(opened(scratch.appendingPathComponent("absent")) == .notACache(directory: scratch.appendingPathComponent("absent")))
        // An empty index file is no index (SQLite would take it for a new database).
        let zero = try directory("zero")
        try Data().write(to: zero.appendingPathComponent(CacheLookup.indexName))
        #expect(opened(zero) == .notACache(directory: zero))
        // A cache written before the index: metadata.json alone.
        let older = try directory("older")
        try Data("{}".utf8).write(to: older.appendingPathComponent("metadata.json"))
        guard case .needsUpgrade(older, let reason)? = opened(older) else {
            Issue.record("an older cache: \(String(describing: opened(older)))")
            return
        }
        #expect(reason.contains("before the index"))
        #expect(LookupError.needsUpgrade(directory: older, reason: reason).description.contains("avatar-cache verify --cache \(older.path)"))
        // Not SQLite at all.
        let garbage = try directory("garbage")
        try Data(repeating: 0x41, count: 4096).write(to: garbage.appendingPathComponent(CacheLookup.indexName))
        guard case .damagedIndex(let file, _)? = opened(garbage) else {
            Issue.record("a damaged index: \(String(describing: opened(garbage)))")
            return
        }
        #expect(file == garbage.appendingPathComponent(CacheLookup.indexName))
        // SQLite, but not the tables of an index.
        let other = try directory("other")
        let stranger = try LookupIndex(in: other)
        try stranger.execute("DROP TABLE entryFile; CREATE TABLE entryFile (entryKey TEXT, tier INTEGER)")
        stranger.close()
        guard case .needsUpgrade(other, let tables)? = opened(other) else {
            Issue.record("an index without the tables: \(String(describing: opened(other)))")
            return
        }
        #expect(tables.contains("without the tables"))
    }

    /// An index written before placeholders (its entries without the two columns) still
    /// answers: a photo without a placeholder, a monogram with its colour.
    @Test func anIndexWrittenBeforePlaceholdersAnswers() throws {
        let cache = try Cache("lookup-no-placeholders", placeholders: false)
        defer { cache.remove() }
        try cache.index.addProfile(id: "pat", displayName: "Pat Doe", initials: "PD", color: "#007AFF", photoSource: Self.photoURL)
        try cache.index.addEntry(key: Self.photoURL, kind: "photo", tiers: [330: 330])
        try cache.index.addProfile(id: "lee", displayName: "Lee", initials: "LE", color: "#FF9500")
        let lookup = try CacheLookup(cache: cache.directory, recordsAccess: false)

        let pat = try lookup.blocking.answer(forUser: "pat", viewSize: 55, scale: 3)
        #expect(pat.kind == .photo && pat.tier == 330 && pat.placeholder == nil)
        let lee = try lookup.blocking.answer(forUser: "lee", viewSize: 55, scale: 3)
        #expect(lee.kind == .notCached && lee.placeholder == Placeholder(color: "#FF9500"))
    }

    /// The JSON `avatar-cache lookup --json` prints and a route serves: its keys, the file
    /// as a path, and read back whole.
    @Test func anAnswerIsItsJSONAndBack() throws {
        let (cache, _, _) = try Self.people("lookup-json")
        defer { cache.remove() }
        let answer = try CacheLookup(cache: cache.directory, recordsAccess: false).blocking.answer(forUser: "pat", viewSize: 55, scale: 3)
        let data = try JSONEncoder().encode(answer)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["userId"] as? String == "pat" && object["url"] as? String == Self.photoURL && object["kind"] as? String == "photo")
        #expect(object["file"] as? String == answer.file?.path && object["tier"] as? Int == 330)
        #expect(object["glyph"] == nil, "absent, not null")
        #expect(try JSONDecoder().decode(CacheLookup.Answer.self, from: data) == answer)
        // An app's own answer, from the names the library gives it.
        let made = CacheLookup.Answer(userID: "x", initials: "", glyph: MonogramGlyph.group, kind: .notCached, placeholder: Placeholder(color: "#336699"))
        #expect(try JSONDecoder().decode(CacheLookup.Answer.self, from: JSONEncoder().encode(made)) == made)
    }

    /// The placeholder's decoder, as an app calls it: the reference implementation's
    /// pixels from its hashes (Tests/Fixtures/thumbhash), and a hash that is not base64
    /// refused.
    @Test func aThumbHashDecodesFromBase64ToTheReferencesPixels() throws {
        let reference = try ThumbHashReference.load()
        #expect(reference.pictures.count == 7)
        for picture in reference.pictures {
            let image = try ThumbHash.decode(base64: picture.hash)
            #expect(image.width == picture.decoded.width && image.height == picture.decoded.height, "\(picture.name)")
            #expect(Data(image.rgba).base64EncodedString() == picture.decoded.rgba, "\(picture.name)")
        }
        #expect(throws: LookupError.self) { try ThumbHash.decode(base64: "not base64!") }
        #expect(throws: LookupError.self) { try ThumbHash.decode(base64: "AAAA") }
    }
}
