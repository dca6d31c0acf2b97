import Foundation
import GRDB
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheFetching
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
@testable import AvatarCacheMonograms
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Profiles through whole runs: the Monica token's confinement, colours that never
/// change, lookup.
@Suite struct ProfilesAndLookupTests {
    func warm(_ configuration: WarmConfiguration) async throws -> RunReport {
        try await WarmPipeline(configuration: configuration, logger: .test).run()
    }

    func writeMonicaPage(_ contacts: [(id: Int, source: String, url: String)], in directory: URL) throws -> String {
        let data = contacts.map { contact in
            ["id": contact.id, "first_name": "C\(contact.id)", "last_name": "L",
             "information": ["avatar": ["url": contact.url, "source": contact.source, "default_avatar_color": "#b3d5fe"]]] as [String: Any]
        }
        let path = directory.appendingPathComponent("monica.json").path
        try JSONSerialization.data(withJSONObject: ["data": data]).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theTokenReachesOnlyTheMonicaHost() async throws {
        let token = "s3cret-monica-token-\(UUID().uuidString)"
        let photo = try Fixtures.photo("astronaut.jpg")
        let other = try FixtureServer(routes: ["/elsewhere.jpg": .ok(bytes: photo), "/gravatar.jpg": .ok(bytes: try Fixtures.photo("coffee.jpg"))])
        defer { other.shutdown() }
        let monica = try FixtureServer(routes: [
            "/photo.jpg": .ok(bytes: try Fixtures.photo("retina.jpg")),
            "/same-host-redirect": .redirect("/photo.jpg"),
            "/cross-host-redirect": .redirect(other.url("/elsewhere.jpg")),
            "/gravatar-on-monica.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg")),
        ])
        defer { monica.shutdown() }
        let directory = try Fixtures.temporaryDirectory("token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try writeMonicaPage([
            (1, "photo", monica.url("/photo.jpg")),
            (2, "photo", monica.url("/same-host-redirect")),
            (3, "photo", monica.url("/cross-host-redirect")),
            (4, "photo", other.url("/elsewhere.jpg")),           // a photo URL on another host
            (5, "gravatar", monica.url("/gravatar-on-monica.jpg")), // not a photo source
            (6, "gravatar", other.url("/gravatar.jpg")),
        ], in: directory)
        let cache = directory.appendingPathComponent("cache")
        var configuration = Fixtures.configuration(exports: [export], cache: cache)
        configuration.monica = MonicaCredential(host: "127.0.0.1:\(monica.port)", token: token)

        let report = try await warm(configuration)

        #expect(report.failed == 0)
        func authorization(_ request: FixtureServer.Request) -> String? {
            request.headers.first { $0.0.lowercased() == "authorization" }?.1
        }
        let toMonica = Dictionary(grouping: monica.requests, by: \.path)
        #expect(toMonica["/photo.jpg"]?.allSatisfy { authorization($0) == "Bearer \(token)" } == true)
        #expect(toMonica["/same-host-redirect"].map { $0.map(authorization) } == ["Bearer \(token)"])
        #expect(toMonica["/cross-host-redirect"].map { $0.map(authorization) } == ["Bearer \(token)"])
        #expect(toMonica["/gravatar-on-monica.jpg"]?.allSatisfy { authorization($0) == nil } == true, "gravatar: no token")
        #expect(!other.requests.isEmpty)
        #expect(other.requests.allSatisfy { authorization($0) == nil }, "never to another host, redirect or not")
        // Nor in the metadata or the report.
        let metadata = try String(contentsOf: cache.appendingPathComponent("metadata.json"), encoding: .utf8)
        #expect(!metadata.contains(token))
        #expect(!String(decoding: try report.jsonData(), as: UTF8.self).contains(token))
        let leaks = other.requests.filter { authorization($0) != nil }.count + (metadata.contains(token) ? 1 : 0)
        HostileLedger.record("network", "Monica token", tried: "photo URLs on the Monica host, on another host, redirected within the host and across hosts; gravatar URLs on the Monica host", count: 6, outcome: "Bearer token only on hops to the exact Monica host and only for photo avatars; never in metadata or the report", secretsLeaked: leaks)
    }

    @Test func colourIsKeptAfterARename() async throws {
        let directory = try Fixtures.temporaryDirectory("rename")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let before = try Fixtures.writeUsersExport([(id: "user-7", name: "Ann Lee", url: nil)], in: directory, name: "a.json")
        _ = try await warm(Fixtures.configuration(exports: [before], cache: cache))
        let first = try #require(try Fixtures.loadMetadata(cache).profiles["user-7"])

        let after = try Fixtures.writeUsersExport([(id: "user-7", name: "Zed Quist", url: nil)], in: directory, name: "b.json")
        _ = try await warm(Fixtures.configuration(exports: [after], cache: cache))
        let second = try #require(try Fixtures.loadMetadata(cache).profiles["user-7"])

        #expect(first.cachedInitials == "AL" && second.cachedInitials == "ZQ")
        #expect(second.avatarColorHex == first.avatarColorHex)
        #expect(first.avatarColorHex == AvatarColor.paletteColor(forUserID: "user-7"))
        #expect(second.kind == .monogram && second.cachedImagePath.count == 2)
    }

    @Test func theStoredColourWinsOverThePaletteOnceAssigned() async throws {
        // A colour stored by an earlier version or run stays, even if the palette rule
        // would now pick another.
        let directory = try Fixtures.temporaryDirectory("stored-colour")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport([(id: "user-8", name: "Bo", url: nil)], in: directory)
        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        let index = try CacheIndex.open(CacheDirectory(root: cache), create: false)
        try index.write { try $0.execute(sql: "UPDATE profile SET color = '#123456' WHERE id = 'user-8'") }
        index.close()

        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))

        #expect(try Fixtures.loadMetadata(cache).profiles["user-8"]?.avatarColorHex == "#123456")
    }

    @Test func lookupAnswersForEveryUserAndCountsAsAnAccess() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("lookup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport([
            (id: "with-photo", name: "Pat Doe", url: server.url("/a.jpg")),
            (id: "no-photo", name: "Lee", url: nil),
            (id: "broken", name: "Kim Ray", url: server.url("/missing.jpg")),
        ], in: directory)
        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        let before = try Fixtures.loadMetadata(cache)
        let lookup = try CacheLookup(cache: cache)

        let photo = try await lookup.answer(forUser: "with-photo", viewSize: 150, scale: 3)
        #expect(photo.kind == .photo && photo.tier == 900 && photo.side == 900 && photo.initials == "PD")
        #expect(FileManager.default.fileExists(atPath: try #require(photo.file).path))
        let small = try await lookup.answer(forUser: "with-photo", viewSize: 15, scale: 3)
        #expect(small.tier == 330 && small.side == 330)
        for id in ["no-photo", "broken"] {
            let monogram = try await lookup.answer(forUser: id, viewSize: 55, scale: 3)
            #expect(monogram.kind == .monogram && monogram.file?.lastPathComponent.hasSuffix("-330.png") == true, "\(id)")
        }
        let byURL = try await lookup.answer(forPhotoURL: server.url("/a.jpg"), viewSize: 55, scale: 3)
        #expect(byURL.userID == "with-photo" && byURL.tier == 330)
        #expect(throws: LookupError.self) { try lookup.blocking.answer(forUser: "nobody", viewSize: 55, scale: 3) }

        // Each lookup moved its entry's last access in the index (what the prune reads),
        // written in the background: flush waits for it.
        await lookup.flush()
        let after = try Fixtures.loadMetadata(cache)
        let monogramKey = try #require(before.profiles["no-photo"]?.monogramSource)
        for key in [server.url("/a.jpg"), monogramKey] {
            #expect(try #require(after.entries[key]?.lastAccess) > #require(before.entries[key]?.lastAccess), "\(key)")
        }
    }

    /// What an app builds on beyond one answer: its users a page at a time, an entry's
    /// tiers with their files, the async answers (tasks sharing one lookup, more of them
    /// than its readers), and an answer of its own making.
    @Test func theLibraryListsUsersAndTiersAndAnswersFromTasks() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("lookup-api")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let users = (0..<25).map { (id: String(format: "u%02d", $0), name: "Pat Doe \($0)", url: $0 % 5 == 0 ? server.url("/a.jpg") : nil) }
        let export = try Fixtures.writeUsersExport(users, in: directory)
        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        let lookup = try CacheLookup(cache: cache, recordsAccess: false, readers: 1)

        // Pages of 7 give every user once, in order, and end with an empty page.
        var listed: [String] = [], page = try lookup.blocking.users(limit: 7)
        while !page.isEmpty {
            #expect(page.count <= 7)
            listed += page
            page = try lookup.blocking.users(after: page.last, limit: 7)
        }
        #expect(listed == users.map(\.id))
        #expect(throws: LookupError.self) { try lookup.blocking.users(limit: 0) }

        // The tiers of a photo and of a monogram: the answer's file is among them.
        for (id, kind) in [("u00", AvatarKind.photo), ("u01", .monogram)] {
            let tiers = try await lookup.tiers(forUser: id)
            #expect(tiers.map(\.pixels) == [330, 900], "\(id)")
            #expect(tiers.allSatisfy { FileManager.default.fileExists(atPath: $0.file.path) }, "\(id)")
            let answer = try await lookup.answer(forUser: id, viewSize: 55, scale: 3)
            #expect(answer.kind == kind && tiers.contains { $0.file == answer.file && $0.pixels == answer.tier }, "\(id)")
            let chosen = CacheLookup.tier(forViewSize: 150, scale: 3, available: tiers.map(\.pixels))
            #expect(chosen == 900)
        }
        #expect(throws: LookupError.self) { try lookup.blocking.tiers(forUser: "nobody") }

        // 8 tasks on 1 reader (on 2 cores, 2 at once: one waits): every async answer is the
        // synchronous one.
        let expected = try Dictionary(uniqueKeysWithValues: users.map { ($0.id, try lookup.blocking.answer(forUser: $0.id, viewSize: 55, scale: 3)) })
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<50 {
                        let id = users[(task * 7 + round) % users.count].id
                        if try await lookup.answer(forUser: id, viewSize: 55, scale: 3) != expected[id] { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        await #expect(throws: LookupError.self) { try await lookup.answer(forUser: "nobody", viewSize: 55, scale: 3) }
        let byURL = try await lookup.answer(forPhotoURL: server.url("/a.jpg"), viewSize: 55, scale: 3)
        #expect(byURL.kind == .photo && byURL.userID == "u00")

        // An app's own answer, from the types the library names.
        let made = CacheLookup.Answer(userID: "x", initials: "", glyph: MonogramGlyph.person, kind: .notCached,
                                      placeholder: Placeholder(color: "#336699"))
        #expect(made.kind == .notCached && made.placeholder?.color == "#336699" && made.file == nil)
    }

    @Test func everySampleExportWarmsIntoACompleteCache() async throws {
        // The three systems' samples, photos served on loopback as the demo does.
        let samples = try SampleExports(label: "samples", monicaOnLocalhost: false)
        let cache = samples.directory.appendingPathComponent("cache")

        let report = try await warm(Fixtures.configuration(exports: samples.exports, cache: cache))

        let metadata = try Fixtures.loadMetadata(cache)
        #expect(report.profilesWithNothing == 0)
        #expect(metadata.profiles.count >= 44 + 14 + 7)
        let lookup = try CacheLookup(cache: cache)
        for (id, profile) in metadata.profiles {
            #expect(Set(profile.cachedImagePath.keys) == ["330", "900"], "\(id) has both sizes")
            let answer = try await lookup.answer(forUser: id, viewSize: 55, scale: 3)
            #expect(answer.file.map { FileManager.default.fileExists(atPath: $0.path) } == true, "lookup answers for \(id)")
        }
    }
}
