import Foundation
import Testing
@testable import AvatarCacheLookup
@testable import AvatarCachePipeline
@testable import AvatarCacheStore
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// metadata.json read without our code: scripts/metadata_lookup.py (Python's standard
/// library, the format docs/cache-format.md documents) answers as `lookup` for every user
/// of a warm, photos, monograms and nothing alike; and the document exists from the first
/// commit of a first warm (its refresh policy alone: AvatarCacheStoreTests'
/// MetadataRefreshTests).
@Suite(.serialized) struct MetadataReaderTests {
    static let reader = Fixtures.repositoryRoot.appendingPathComponent("scripts/metadata_lookup.py").path

    /// Runs the Python reader with `arguments`.
    static func python(_ arguments: [String]) throws -> Binary.Result {
        try Binary.run(["python3", reader] + arguments, executable: URL(fileURLWithPath: "/usr/bin/env"))
    }

    /// The reader's answer for every user of the document at one view size.
    static func readerAnswers(_ cache: URL, size: Double, scale: Double) throws -> [String: CacheLookup.Answer] {
        let result = try python([cache.path, "--all", "--size", String(size), "--scale", String(scale)])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([String: CacheLookup.Answer].self, from: Data(result.stdout.utf8))
    }

    /// For every user of the index, at a few view sizes and scales, the reader's answer
    /// equals the library's; the kinds seen, counted.
    @discardableResult
    static func expectReaderAnswersAsLookup(_ cache: URL) throws -> [AvatarKind: Int] {
        let ids = try Fixtures.loadMetadata(cache).profiles.keys
        let lookup = try CacheLookup(cache: cache, recordsAccess: false)
        var kinds: [AvatarKind: Int] = [:]
        for (size, scale) in [(55.0, 3.0), (55.1, 3), (20.0, 1), (150.0, 3), (400.0, 2), (32.5, 8), (55.0, 2.625), (15.0, 1.5)] {
            let answers = try readerAnswers(cache, size: size, scale: scale)
            #expect(Set(answers.keys) == Set(ids), "the document names every user of the index")
            for id in ids {
                let expected = try lookup.blocking.answer(forUser: id, viewSize: size, scale: scale)
                #expect(answers[id] == expected, "\(id) at \(size) pt × \(scale)")
                if size == 55 { kinds[expected.kind, default: 0] += 1 }
            }
        }
        return kinds
    }

    @Test func thePythonReaderAnswersAsLookupForEveryUserOfAWarm() async throws {
        let samples = try SampleExports(label: "metadata-reader")
        // Beside the samples: a photo that fails (the monogram shown, the URL kept), an
        // empty name (unknown initials), an id that needs escaping.
        let extra = try Fixtures.writeUsersExport([
            (id: "broken-photo", name: "Broken Link", url: samples.server.url("/photos/missing.jpg")),
            (id: "nameless", name: "", url: nil),
            (id: "quote \" backslash \\ tab\t", name: "Émile Müller", url: nil),
        ], in: samples.directory, name: "extra.json")
        var configuration = samples.configuration("cache")
        configuration.exports.append(extra)
        let cache = configuration.cacheDirectory
        _ = try await WarmPipeline(configuration: configuration, logger: .test).run()

        let document = try Fixtures.loadDocument(cache)
        #expect(document.schemaVersion == 5 && document.decodeSizes == [110, 300])
        #expect(document.users?["broken-photo"]?.kind == .monogram)
        #expect(document.users?["broken-photo"]?.photo == samples.server.url("/photos/missing.jpg"))
        let kinds = try Self.expectReaderAnswersAsLookup(cache)
        #expect(kinds[.photo, default: 0] > 10 && kinds[.monogram, default: 0] > 3, "\(kinds)")
        #expect(document.users?.values.contains { $0.glyph != nil } == true, "a glyph among the samples")

        // `avatar-cache lookup --json`, the binary, for every user: the same answers.
        let answers = try Self.readerAnswers(cache, size: 55, scale: 3)
        for (id, answer) in answers {
            let result = try Binary.run(["lookup", "--cache", cache.path, "--user", id, "--json", "--size", "55", "--scale", "3"])
            #expect(result.status == 0, "\(id): \(result.stderr)")
            #expect(try JSONDecoder().decode(CacheLookup.Answer.self, from: Data(result.stdout.utf8)) == answer, "\(id)")
        }
        // A URL, as `lookup --url`.
        let photoUser = try #require(answers.values.first { $0.kind == .photo && $0.photoURL != nil })
        let byURL = try Self.python([cache.path, "--url", photoUser.photoURL!])
        let viaLibrary = try await CacheLookup(cache: cache, recordsAccess: false)
            .answer(forPhotoURL: photoUser.photoURL!, viewSize: 55, scale: 3)
        #expect(try JSONDecoder().decode(CacheLookup.Answer.self, from: Data(byURL.stdout.utf8)) == viaLibrary)
        #expect(try Self.python([cache.path, "--user", "nobody-at-all"]).status == 66)

        // Pruned hard: users whose monogram and photo went show nothing, some keep a
        // photo; the document written by the prune still answers as the index.
        let prune = try Binary.run(["prune", "--cache", cache.path, "--budget", "150KB"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let afterPrune = try Self.expectReaderAnswersAsLookup(cache)
        #expect(afterPrune[.notCached, default: 0] > 0, "\(afterPrune)")
    }

    @Test func metadataJSONExistsFromTheFirstCommitOfAFirstWarm() throws {
        // Ten photos answered at once, one after 60 s: the run commits the ten (every 2 s
        // at least) and goes on waiting.
        var routes: [String: FixtureServer.Reply] = ["/slow.jpg": .delayed(seconds: 60, bytes: try Fixtures.photo("chelsea.jpg"))]
        let names = ["chelsea.jpg", "coffee-cmyk.jpg", "camera.png", "hubble.jpg", "logo.png"]
        for (index, name) in names.enumerated() { routes["/p\(index)"] = .ok(bytes: try Fixtures.photo(name)) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("metadata-first-commit")
        defer { try? FileManager.default.removeItem(at: directory) }
        var users = names.indices.map { (id: "fast-\($0)", name: "Fast \($0)", url: Optional(server.url("/p\($0)"))) }
        users.append((id: "slow", name: "Slow Server", url: server.url("/slow.jpg")))
        users.append((id: "plain", name: "Plain Monogram", url: nil))
        let export = try Fixtures.writeUsersExport(users, in: directory)
        let cache = directory.appendingPathComponent("cache")

        let process = try Binary.startQuietly(["warm", export, "--cache", cache.path, "--allow-private-networks", "--timeout", "120"])
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Polled while the run waits for the slow photo: the document with the fast ones.
        var seen: MetadataDocument?
        let deadline = Date().addingTimeInterval(40)
        while Date() < deadline, process.isRunning {
            if let document = try? Fixtures.loadDocument(cache),
               names.indices.allSatisfy({ document.users?["fast-\($0)"]?.kind == .photo }) {
                seen = document
                break
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(process.isRunning, "the run still waits for the slow photo")
        let document = try #require(seen, "metadata.json with the committed photos while the run goes on")
        #expect(document.schemaVersion == MetadataDocument.schemaVersion)
        #expect(Set(document.users.map { Array($0.keys) } ?? []) == Set(users.map(\.id)), "every user read is in it")
        #expect(document.users?["slow"]?.kind == AvatarKind.notCached, "the slow photo is not committed yet")

        // Killed there: the document left answers as the index for every user.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try Self.expectReaderAnswersAsLookup(cache)
        for (_, answer) in try Self.readerAnswers(cache, size: 55, scale: 3) {
            if let file = answer.file { #expect(FileManager.default.fileExists(atPath: file.path), "\(file)") }
        }
    }

    /// `verify` holds the document's users to its entries: a user whose entry is missing
    /// is named, and `--repair` writes the document again.
    @Test func verifyNamesAUserWhoseEntryTheDocumentLacks() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("metadata-verify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport([(id: "a", name: "Ann Lee", url: server.url("/a.jpg")),
                                                    (id: "b", name: "Bo Kim", url: nil)], in: directory)
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let verifier = CacheVerifier(directory: CacheDirectory(root: cache))
        #expect(try verifier.verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)

        let url = cache.appendingPathComponent(CacheDirectory.metadataName)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entries = try #require(json["entries"] as? [String: Any])
        entries[server.url("/a.jpg")] = nil
        json["entries"] = entries
        try JSONSerialization.data(withJSONObject: json).write(to: url)

        let found = try verifier.verify(budgetBytes: 100_000_000, repair: false).problems
        #expect(found.map(\.kind) == [.documentDangling] && found.first?.subject == "user a", "\(found)")
        _ = try verifier.verify(budgetBytes: 100_000_000, repair: true)
        #expect(try verifier.verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)
    }

    /// A warm given other decode sizes records them (the index's `decodeSizes`, the
    /// document's): the tier rule starts from the smallest, in the library, the binary and
    /// the Python reader alike.
    @Test func theTierRuleStartsFromTheSizesTheWarmWasGiven() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("metadata-decode-sizes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport([(id: "a", name: "Ann Lee", url: server.url("/a.jpg")),
                                                    (id: "b", name: "Bo Kim", url: nil)], in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: cache)
        configuration.pointSizes = [200, 64]
        configuration.scales = [2, 3]
        _ = try await WarmPipeline(configuration: configuration, logger: .test).run()

        #expect(try Fixtures.loadDocument(cache).decodeSizes == [64, 200])
        let lookup = try CacheLookup(cache: cache, recordsAccess: false)
        // 20 pt at 3× needs max(40, 64) × 3 = 192 px (the rule from 110 would take 400).
        #expect(try lookup.blocking.answer(forUser: "a", viewSize: 20, scale: 3).tier == 192)
        #expect(try lookup.blocking.answer(forUser: "a", viewSize: 20, scale: 2).tier == 128)
        #expect(try lookup.blocking.answer(forUser: "b", viewSize: 20, scale: 3).tier == 192, "a monogram too")
        let result = try Binary.run(["lookup", "--cache", cache.path, "--user", "a", "--json", "--size", "20", "--scale", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONDecoder().decode(CacheLookup.Answer.self, from: Data(result.stdout.utf8)).tier == 192)
        try Self.expectReaderAnswersAsLookup(cache)
        #expect(try Self.readerAnswers(cache, size: 20, scale: 3)["a"]?.tier == 192)
    }

    /// A re-run that changes nothing a reader finds leaves the document as it is (a
    /// million-profile re-run would write 160 MB for access times); a renamed user, or a
    /// document not the one the last run wrote, is written again.
    @Test func aRerunWritesTheDocumentOnlyWhenAReaderWouldFindSomethingNew() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("metadata-rerun")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        func warm(_ name: String) async throws {
            let export = try Fixtures.writeUsersExport([(id: "a", name: "Ann Lee", url: server.url("/a.jpg")),
                                                        (id: "b", name: name, url: nil)], in: directory)
            _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        }
        let url = cache.appendingPathComponent(CacheDirectory.metadataName)
        func identity() throws -> [FileAttributeKey: AnyHashable] {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            return [.systemFileNumber: attributes[.systemFileNumber] as! AnyHashable, .modificationDate: attributes[.modificationDate] as! AnyHashable]
        }
        try await warm("Bo Kim")
        let first = try identity()
        try await warm("Bo Kim")
        #expect(try identity() == first, "nothing changed: not written again")
        try await warm("Bea Kim")
        #expect(try identity() != first)
        #expect(try Fixtures.loadDocument(cache).users?["b"]?.displayName == "Bea Kim")
        try Self.expectReaderAnswersAsLookup(cache)
        // Written by another command (a prune that evicted nothing does not write it).
        try Data("{}".utf8).write(to: url)
        try await warm("Bea Kim")
        #expect(try Fixtures.loadDocument(cache).users?.count == 2, "a document not the last run's is written again")
    }
}
