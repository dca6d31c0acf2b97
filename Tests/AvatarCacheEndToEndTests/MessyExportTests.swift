import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheModel
@testable import AvatarCachePipeline
@testable import AvatarCacheStore
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Exports as users really have them (issue 13): mistakes inside one export are reported
/// and handled the same way by one run and by any split of it.
@Suite struct MessyExportTests {
    @Test func aUserIdRepeatedInOneExportIsABadRecordAndTheFirstWins() async throws {
        let server = try FixtureServer(routes: [
            "/first.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg")),
            "/second.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg")),
            "/other.jpg": .ok(bytes: try Fixtures.photo("coffee.jpg")),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("duplicates")
        defer { try? FileManager.default.removeItem(at: directory) }
        var users: [(id: String, name: String, url: String?)] = [
            (id: "dup", name: "First Record", url: server.url("/first.jpg")),
            (id: "other", name: "Other User", url: server.url("/other.jpg")),
            (id: "dup", name: "Second Record", url: server.url("/second.jpg")),
        ]
        for i in 0..<20 { users.append((id: "u\(i)", name: "User \(i)", url: nil)) }
        users.append((id: "u3", name: "Again Three", url: nil))
        let export = try Fixtures.writeUsersExport(users, in: directory)
        // The same user in a second export is not a duplicate: the later export updates it.
        let later = try Fixtures.writeUsersExport([(id: "other", name: "Other Renamed", url: server.url("/other.jpg"))], in: directory, name: "later.json")

        func run(_ name: String, shard: Shard? = nil) async throws -> RunReport {
            var configuration = Fixtures.configuration(exports: [export, later], cache: directory.appendingPathComponent(name))
            configuration.shard = shard
            configuration.pruner.budgetBytes = 1_000_000_000
            return try await WarmPipeline(configuration: configuration, logger: .test).run()
        }
        let report = try await run("single")
        let duplicates = report.badRecordDetails.filter { $0.reason.contains("again (first at") }
        #expect(duplicates.map(\.index) == [3, 24], "\(report.badRecordDetails)")
        #expect(duplicates.first?.reason.contains("user id \"dup\" again (first at record 1)") == true, "\(duplicates)")
        #expect(duplicates.last?.reason.contains("user id \"u3\" again (first at record 7)") == true, "\(duplicates)")
        #expect(duplicates.allSatisfy { $0.file == export })
        #expect(report.profileRecords == users.count - 2 + 1, "the ignored records are not counted as used")
        let metadata = try Fixtures.loadMetadata(directory.appendingPathComponent("single"))
        #expect(metadata.profiles["dup"]?.displayName == "First Record")
        #expect(metadata.profiles["dup"]?.photoSource == server.url("/first.jpg"))
        #expect(metadata.entries[server.url("/second.jpg")] == nil, "the ignored record's photo is not fetched")
        #expect(!server.requests.contains { $0.path == "/second.jpg" })
        #expect(metadata.profiles["u3"]?.displayName == "User 3")
        #expect(metadata.profiles["other"]?.displayName == "Other Renamed", "across exports the later record updates")

        // Split three ways, every shard tells the same records apart.
        var shards: [CacheDirectory] = []
        var reported: [Int] = []
        for index in 0..<3 {
            let shardReport = try await run("shard\(index)", shard: try Shard(index: index, count: 3))
            reported += shardReport.badRecordDetails.filter { $0.reason.contains("again (first at") }.map(\.index)
            shards.append(CacheDirectory(root: directory.appendingPathComponent("shard\(index)")))
        }
        #expect(reported.sorted() == [3, 24], "each duplicate reported once, by the shard that read it")
        let merged = CacheDirectory(root: directory.appendingPathComponent("merged"))
        _ = try CacheMerge.merge(shards, into: merged, budgetBytes: 1_000_000_000, trimRatio: 0.8, wait: 0, logger: .test)
        let mergedMetadata = try Fixtures.loadMetadata(merged.root)
        for id in ["dup", "u3", "other"] {
            #expect(mergedMetadata.profiles[id]?.displayName == metadata.profiles[id]?.displayName, "\(id)")
            #expect(mergedMetadata.profiles[id]?.photoSource == metadata.profiles[id]?.photoSource, "\(id)")
        }
        #expect(Set(mergedMetadata.entries.keys) == Set(metadata.entries.keys))
        HostileLedger.record("inputs", "duplicate user ids", tried: "an id repeated inside one export (twice), the same user in a second export; the run split 3 ways", count: 3,
                             outcome: "each repeat a bad record naming both positions, the first record kept and only its photo fetched; the later export updates the user; every shard reports and keeps the same")
    }

    @Test func aRepeatedIdIsReportedAtTheRecordsTheReaderNamed() async throws {
        // A Monica page where the first contact is also reported (no "information"): the
        // positions are the reader's records, not a count of what reached the pipeline.
        let directory = try Fixtures.temporaryDirectory("repeat-positions")
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = """
            {"data": [
              {"id": 1, "first_name": "Ada", "last_name": "Lovelace"},
              {"id": 2, "first_name": "Alan", "last_name": "Turing", "information": {"avatar": {"source": "default", "default_avatar_color": "#b3d5fe"}}},
              {"id": 1, "first_name": "Ada", "last_name": "Again"}
            ]}
            """
        let path = directory.appendingPathComponent("contacts.json").path
        try Data(page.utf8).write(to: URL(fileURLWithPath: path))
        let report = try await WarmPipeline(configuration: Fixtures.configuration(exports: [path], cache: directory.appendingPathComponent("c")), logger: .test).run()
        let repeated = try #require(report.badRecordDetails.first { $0.reason.contains("again (first at") }, "\(report.badRecordDetails)")
        #expect(repeated.index == 3 && repeated.line == 4, "\(repeated)")
        #expect(repeated.reason.contains("user id \"1\" again (first at record 1)"), "\(repeated)")
    }

    @Test func aFieldOfTheWrongTypeIsReportedWithItsLineAndTheUserKept() async throws {
        let server = try FixtureServer(routes: ["/ok.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("wrong-type")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = """
            {
              "users": [
                {"id": "ok", "displayName": "Okay User", "profileImageUrl": "\(server.url("/ok.jpg"))"},
                {
                  "id": "numeric-url",
                  "displayName": "Numeric Url",
                  "profileImageUrl": 12345
                },
                {
                  "id": "object-name",
                  "displayName": {"first": "Ob", "last": "Ject"},
                  "email": ["ob@example.com"]
                }
              ]
            }
            """
        let usersPath = directory.appendingPathComponent("users.json").path
        try Data(users.utf8).write(to: URL(fileURLWithPath: usersPath))
        let conversations = """
            {"conversations": [
              {"id": "c1", "participantIds": ["p1", "p2"],
               "participants": {
                 "p1": {"displayName": "Pat One", "profileImageUrl": 42},
                 "p2": {"displayName": true}
               },
               "updatedAt": "2026-11-20T08:00:00Z"}
            ]}
            """
        let conversationsPath = directory.appendingPathComponent("conversations.json").path
        try Data(conversations.utf8).write(to: URL(fileURLWithPath: conversationsPath))

        var configuration = Fixtures.configuration(exports: [usersPath, conversationsPath], cache: directory.appendingPathComponent("cache"))
        configuration.format = nil
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        let typeProblems = report.badRecordDetails.filter { $0.reason.contains("expected a string, found") }
        #expect(typeProblems.map(\.line) == [7, 11, 12, 4, 5], "\(typeProblems)")
        #expect(typeProblems[0].reason.contains("user \"numeric-url\": field \"profileImageUrl\": expected a string, found a number"))
        #expect(typeProblems[1].reason.contains("field \"displayName\": expected a string, found an object"))
        #expect(typeProblems[2].reason.contains("field \"email\": expected a string, found an array"))
        #expect(typeProblems[3].reason.contains("participant \"p1\": field \"profileImageUrl\": expected a string, found a number"))
        #expect(typeProblems[4].reason.contains("participant \"p2\": field \"displayName\": expected a string, found true or false"))
        let metadata = try Fixtures.loadMetadata(directory.appendingPathComponent("cache"))
        for id in ["ok", "numeric-url", "object-name", "p1", "p2"] {
            #expect(metadata.profiles[id] != nil, "\(id) is kept")
        }
        #expect(metadata.profiles["numeric-url"]?.photoSource == nil, "12345 is not a source")
        #expect(metadata.profiles["numeric-url"]?.displayName == "Numeric Url")
        #expect(metadata.profiles["p1"]?.displayName == "Pat One" && metadata.profiles["p1"]?.photoSource == nil)
        #expect(report.sources == 1 && server.requests.map(\.path) == ["/ok.jpg"], "only the real URL is fetched")
        HostileLedger.record("inputs", "fields of the wrong type", tried: "a number as profileImageUrl (users and conversations), an object as displayName, an array as email, true as a name", count: 5,
                             outcome: "each reported with its field and line, read as absent; every user kept; nothing fetched for them")
    }

    @Test func aHugeURLIsCutInEveryOutputAndAHashKeepsTwoApart() throws {
        let directory = try Fixtures.temporaryDirectory("huge-url")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two 100 KB URLs that differ only at their end.
        let long = "http://127.0.0.1:9/" + String(repeating: "a", count: 100_000)
        let export = try Fixtures.writeUsersExport([
            (id: "one", name: "One", url: long + "1.jpg"),
            (id: "two", name: "Two", url: long + "2.jpg"),
        ], in: directory)
        let reportPath = directory.appendingPathComponent("report.json").path
        let cache = directory.appendingPathComponent("cache").path
        let result = try Binary.run(["warm", export, "--cache", cache, "--report", reportPath])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.utf8.count < 5_000, "stderr holds \(result.stderr.utf8.count) bytes")
        #expect(result.stderr.contains("(100024 characters, sha256 "), "\(result.stderr.prefix(600))")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as! [String: Any]
        let failures = try #require(report["failures"] as? [[String: Any]])
        let urls = failures.compactMap { $0["url"] as? String }
        #expect(urls.count == 2 && urls.allSatisfy { $0.count <= ShownText.maxURLCharacters })
        #expect(Set(urls).count == 2, "the hash keeps them apart")
        #expect(try Data(contentsOf: URL(fileURLWithPath: reportPath)).count < 10_000)
        #expect(failures.allSatisfy { ($0["reason"] as? String)?.contains("over") == true })
        // The cache's own keys keep the whole URL (a lookup by URL still works).
        let metadata = try Fixtures.loadMetadata(URL(fileURLWithPath: cache))
        #expect(metadata.profiles["one"]?.photoSource == long + "1.jpg")
        #expect(metadata.failures.values.allSatisfy { $0.reason.count <= ShownText.maxReasonCharacters + 100 })
        let verify = try Binary.run(["verify", "--cache", cache])
        #expect(verify.stdout.utf8.count < 5_000)
        HostileLedger.record("inputs", "a 100 KB URL in the outputs", tried: "two 100 KB URLs differing at their end", count: 2,
                             outcome: "shown as 200 characters and a hash in the log (\(result.stderr.utf8.count) bytes of stderr), the report and verify; the two stay apart; the cache's keys keep the whole URL")
    }

    // MARK: Monica, as people save it and as its API returns it

    func readMonica(_ path: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        try Fixtures.read(ExportFormat.detect(path: path).reader(path: path, limits: ReaderLimits()))
    }

    @Test func monicaBodiesAsTheAPIReturnsThem() async throws {
        let directory = try Fixtures.temporaryDirectory("monica-api")
        defer { try? FileManager.default.removeItem(at: directory) }
        // GET /api/contacts/:id: one contact under "data".
        let single = directory.appendingPathComponent("contact.json").path
        try Data("{\"data\": \(Fixtures.monicaContact(42, "Marie", "Curie"))}".utf8).write(to: URL(fileURLWithPath: single))
        let one = try readMonica(single)
        #expect(one.profiles.map(\.id) == ["42"] && one.bad.isEmpty, "\(one.bad)")
        #expect(one.profiles.first?.displayName == "Marie Curie")

        // GET /api/photos: photo objects are not contacts.
        let photos = directory.appendingPathComponent("photos.json").path
        let photo = { (id: Int) in "{\"id\": \(id), \"object\": \"photo\", \"original_filename\": \"p\(id).jpg\", \"link\": \"https://monica.example.com/store/photos/p\(id).jpg\", \"information\": {}}" }
        try Data("{\"data\": [\(photo(1)), \(photo(2)), \(photo(3))]}".utf8).write(to: URL(fileURLWithPath: photos))
        let result = try Binary.run(["warm", photos, "--format", "monica", "--cache", directory.appendingPathComponent("c").path])
        #expect(result.status == 65, "no contact in a photos page: \(result.stderr)")
        #expect(result.stderr.contains("a \"photo\" object, not a contact"), "\(result.stderr)")

        // The documented avatar source `external`: a URL, fetched without the token.
        let server = try FixtureServer(routes: ["/ext.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let external = directory.appendingPathComponent("external.json").path
        try Data("{\"data\": [\(Fixtures.monicaContact(7, "Ext", "Ernal", source: "external", url: server.url("/ext.jpg")))]}".utf8)
            .write(to: URL(fileURLWithPath: external))
        var configuration = Fixtures.configuration(exports: [external], cache: directory.appendingPathComponent("cache"))
        configuration.monica = MonicaCredential(host: "127.0.0.1:\(server.port)", token: "secret-token")
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(report.downloaded == 1 && report.profilesWithPhoto == 1, "\(report.summary)")
        let request = try #require(server.requests.first { $0.path == "/ext.jpg" })
        #expect(!request.headers.contains { $0.0.lowercased() == "authorization" }, "no token for an external avatar")
        HostileLedger.record("inputs", "Monica API bodies", tried: "a single contact ({\"data\": {…}}), a page of photos, an avatar of source external", count: 3,
                             outcome: "the contact read; the photos reported as not contacts (exit 65, nothing taken for a nameless contact); the external URL fetched without the token")
    }
}
