import Foundation
import Testing
@testable import AvatarCacheLookup
@testable import AvatarCachePipeline
@testable import AvatarCacheStore
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// A cache written by the version before the index (Fixtures/v1-cache, made by 101568b)
/// is taken over: imported once, nothing downloaded or decoded again, every profile
/// keeps its initials and colour, and every lookup answers as that version did.
@Suite struct TakeOverTests {
    static let fixture = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/v1-cache")
    /// The port the fixture's photo server had; its URLs are the cache's keys.
    static let recordedHost = "127.0.0.1:38517"

    /// A copy of the fixture whose URLs point at `server` (the document and exports are
    /// text: only the port changes) and whose times are moved by the time since it was
    /// recorded: the cache is as old now as it was then (fresh for its TTL, its failure
    /// not retried yet), whatever day the test runs.
    func copyFixture(to directory: URL, server: FixtureServer) throws -> (cache: URL, users: String, jami: String) {
        let cache = directory.appendingPathComponent("cache")
        try FileManager.default.copyItem(at: Self.fixture.appendingPathComponent("cache"), to: cache)
        for file in [cache.appendingPathComponent(CacheDirectory.metadataName)] {
            let text = try String(contentsOf: file, encoding: .utf8)
            try Self.movingTimes(of: text, to: Date())
                .replacingOccurrences(of: Self.recordedHost, with: "127.0.0.1:\(server.port)").write(to: file, atomically: true, encoding: .utf8)
        }
        let users = directory.appendingPathComponent("users.json")
        try String(contentsOf: Self.fixture.appendingPathComponent("users.json"), encoding: .utf8)
            .replacingOccurrences(of: Self.recordedHost, with: "127.0.0.1:\(server.port)").write(to: users, atomically: true, encoding: .utf8)
        let jami = directory.appendingPathComponent("jami")
        try FileManager.default.copyItem(at: Self.fixture.appendingPathComponent("jami"), to: jami)
        return (cache, users.path, jami.path)
    }

    /// `text` (a metadata document) with every ISO 8601 time moved by `now` minus its
    /// `updatedAt`.
    static func movingTimes(of text: String, to now: Date) throws -> String {
        let pattern = try Regex(#"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"#)
        let updated = try #require(text.firstMatch(of: try Regex(#""updatedAt" *: *"([^"]+)""#)).flatMap { match in
            match.output[1].substring.flatMap { ISO8601.parse(String($0)) }
        })
        let shift = now.timeIntervalSince(updated)
        return text.replacing(pattern) { match in
            let time = String(text[match.range])
            return ISO8601.parse(time).map { ISO8601.format($0.addingTimeInterval(shift)) } ?? time
        }
    }

    /// What the earlier version answered, with the URLs moved to `port`.
    func expectedLookups(port: Int) throws -> [String: [String: String]] {
        let lines = try String(contentsOf: Self.fixture.appendingPathComponent("lookups.ndjson"), encoding: .utf8).split(separator: "\n")
        var answers: [String: [String: String]] = [:]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            var fields: [String: String] = [:]
            for (key, value) in object where !(value is NSNull) {
                fields[key] = "\(value)".replacingOccurrences(of: Self.recordedHost, with: "127.0.0.1:\(port)")
            }
            answers[try #require(fields["userId"])] = fields
        }
        return answers
    }

    func answers(_ cache: URL, users: [String]) throws -> [String: [String: String]] {
        let lookup = try CacheLookup(cache: cache)
        var answers: [String: [String: String]] = [:]
        for user in users {
            let answer = try lookup.blocking.answer(forUser: user, viewSize: 55, scale: 3)
            var fields: [String: String] = ["userId": user, "kind": answer.kind.rawValue]
            fields["url"] = answer.photoURL
            fields["displayName"] = answer.displayName
            fields["initials"] = answer.initials
            fields["glyph"] = answer.glyph?.rawValue
            fields["color"] = answer.color
            fields["textColor"] = answer.textColor
            fields["file"] = answer.file?.lastPathComponent
            fields["tier"] = answer.tier.map(String.init)
            fields["side"] = answer.side.map(String.init)
            answers[user] = fields
        }
        return answers
    }

    @Test func aCacheOfTheVersionBeforeTheIndexIsTakenOver() async throws {
        let photos = Fixtures.repositoryRoot.appendingPathComponent("samples/photos")
        let small = try [UInt8](Data(contentsOf: photos.appendingPathComponent("chelsea-96.jpg")))
        let disc = try [UInt8](Data(contentsOf: photos.appendingPathComponent("chelsea-disc.webp")))
        let server = try FixtureServer(routes: [
            "/photos/chelsea-96.jpg": .ok(bytes: small), "/photos/chelsea-96.jpg?same-bytes": .ok(bytes: small),
            "/photos/chelsea-disc.webp": .ok(bytes: disc),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("take-over")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cache, users, jami) = try copyFixture(to: directory, server: server)
        let expected = try expectedLookups(port: server.port)
        #expect(expected.count == 8)
        let filesBefore = try Fixtures.fileNames(in: cache)

        // The library alone reads no such cache (it writes nothing but access times): it
        // says what upgrades it. `avatar-cache lookup` (the front hands it to the engine)
        // imports the cache, under the lock, and answers; then the library answers as before.
        #expect(!CacheIndex.exists(in: CacheDirectory(root: cache)))
        #expect {
            _ = try CacheLookup(cache: cache)
        } throws: { error in
            guard case LookupError.needsUpgrade = error else { return false }
            return "\(error)".contains("before the index") && "\(error)".contains("avatar-cache verify")
        }
        let first = try #require(expected.keys.sorted().first)
        let command = try Binary.run(["lookup", "--cache", cache.path, "--user", first, "--json"])
        #expect(command.status == 0 && command.stdout.contains("\"kind\""), "\(command.stderr)")
        #expect(try answers(cache, users: Array(expected.keys)) == expected)
        #expect(CacheIndex.exists(in: CacheDirectory(root: cache)))
        #expect(try Fixtures.loadDocument(cache).schemaVersion == MetadataDocument.schemaVersion, "metadata.json rewritten at schema 2")
        let imported = try Fixtures.loadMetadata(cache)
        #expect(imported.entries.count == 8 && imported.profiles.count == 8 && imported.failures.count == 1)

        // A warm-up of the same exports: nothing decoded or drawn again, nothing written.
        var configuration = Fixtures.configuration(exports: [users, jami], cache: cache)
        configuration.failureTTL = 365 * 86_400
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(report.profiles == 8)
        #expect(report.decoded == 0 && report.monogramsRendered == 0 && report.filesWritten == 0, "\(report.summary)")
        #expect(report.profilesWithPhoto == 4 && report.profilesWithMonogram == 4)
        // Inside the TTL (and the failure's retry time) the photo server is not asked at all.
        #expect(server.requests.isEmpty, "\(server.requests.map(\.path))")
        #expect(try answers(cache, users: Array(expected.keys)) == expected, "every profile keeps its initials, colour and file")
        let cacheFiles = { (names: [String]) in names.filter { CacheDirectory.isCacheFileName($0) } }
        #expect(cacheFiles(try Fixtures.fileNames(in: cache)) == cacheFiles(filesBefore))
        let verified = try CacheVerifier(directory: CacheDirectory(root: cache)).verify(budgetBytes: 100_000_000, repair: false)
        #expect(verified.problems.isEmpty, "\(verified.problems)")
    }

    @Test func aDamagedIndexIsRefusedAndRebuiltFromTheDocumentOnceMovedAside() async throws {
        let server = try FixtureServer(routes: [:])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("damaged-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cache, users, _) = try copyFixture(to: directory, server: server)
        let store = CacheDirectory(root: cache)
        _ = try Fixtures.loadMetadata(cache)   // imported
        let indexURL = cache.appendingPathComponent(CacheIndex.fileName)
        try Data(repeating: 0x5A, count: 8192).write(to: indexURL)

        let refused = try Binary.run(["warm", users, "--cache", cache.path, "--allow-private-networks"])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains(CacheIndex.fileName) && refused.stderr.contains("move it aside"), "\(refused.stderr)")

        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.moveItem(atPath: indexURL.path + suffix, toPath: indexURL.path + suffix + ".bad")
        }
        // metadata.json (schema 2) gives the entries back: the photos stay cached.
        var configuration = Fixtures.configuration(exports: [users], cache: cache)
        configuration.failureTTL = 365 * 86_400
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(report.decoded == 0 && report.filesWritten == 0, "\(report.summary)")
        #expect(try CacheVerifier(directory: store).verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)
    }
}
