import Foundation
import Testing
@testable import AvatarCachePipeline
@testable import AvatarCacheStore
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// `verify`: every kind of damage found, and `--repair` fixing it.
@Suite struct VerifyTests {
    @Test func verifyFindsEveryKindOfDamageAndRepairFixesIt() async throws {
        let server = try FixtureServer(routes: [
            "/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg")), "/b.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg")),
            "/c.jpg": .ok(bytes: try Fixtures.photo("coffee.jpg")),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("verify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport(["/a.jpg", "/b.jpg", "/c.jpg"].map { (id: $0, name: "U", url: Optional(server.url($0))) }, in: directory)
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let store = CacheDirectory(root: cache)
        let verifier = CacheVerifier(directory: store)
        #expect(try verifier.verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty, "a fresh cache verifies clean")

        let metadata = try Fixtures.loadMetadata(cache)
        let a = metadata.entries[server.url("/a.jpg")]!, b = metadata.entries[server.url("/b.jpg")]!
        try FileManager.default.removeItem(at: cache.appendingPathComponent(a.files["330"]!.filename))   // deleted
        var bytes = try Data(contentsOf: cache.appendingPathComponent(b.files["900"]!.filename))
        bytes[bytes.count / 2] ^= 0xFF                                                                    // modified, same size
        try bytes.write(to: cache.appendingPathComponent(b.files["900"]!.filename))
        let orphan = String(repeating: "c", count: 64) + "-330.jpg"
        try Data("x".utf8).write(to: cache.appendingPathComponent(orphan))                                // orphan
        try Data("x".utf8).write(to: cache.appendingPathComponent(".tmp-leftover"))                       // leftover

        let found = try verifier.verify(budgetBytes: 100_000_000, repair: false)

        let kinds = Set(found.problems.map(\.kind))
        // The deleted file is also named by metadata.json, the apps' document.
        #expect(kinds == [.missingFile, .wrongHash, .orphanFile, .temporaryLeftover, .documentDangling])
        #expect(found.problems.contains { $0.kind == .orphanFile && $0.subject == orphan })

        let repaired = try verifier.verify(budgetBytes: 100_000_000, repair: true)
        #expect(!repaired.repaired.isEmpty)
        let after = try verifier.verify(budgetBytes: 100_000_000, repair: false)
        #expect(after.problems.isEmpty, "\(after.problems)")
        let kept = try Fixtures.loadMetadata(cache)
        #expect(kept.entries[server.url("/c.jpg")] == metadata.entries[server.url("/c.jpg")], "the good entry is untouched")
        #expect(kept.entries[server.url("/a.jpg")] == nil && kept.entries[server.url("/b.jpg")] == nil)
        #expect(try verifier.verify(budgetBytes: 1000, repair: false).problems.map(\.kind) == [.overBudget])
    }

    /// The document is walked as a stream: one cut short is unreadable, said where, and
    /// `--repair` writes it again from the index.
    @Test func aDocumentCutShortIsUnreadableAndRepairWritesItAgain() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("verify-cut")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let export = try Fixtures.writeUsersExport([(id: "a", name: "Ann Lee", url: server.url("/a.jpg")), (id: "b", name: "Bo Kim", url: nil)], in: directory)
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let verifier = CacheVerifier(directory: CacheDirectory(root: cache))
        #expect(try verifier.verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)

        let url = cache.appendingPathComponent(CacheDirectory.metadataName)
        let whole = try Data(contentsOf: url)
        try whole.prefix(whole.count - 20).write(to: url)
        let found = try verifier.verify(budgetBytes: 100_000_000, repair: false).problems
        #expect(found.map(\.kind) == [.documentUnreadable], "\(found)")
        #expect(found.first?.detail.contains("at byte ") == true && found.first?.detail.contains("truncated") == true, "\(found)")

        _ = try verifier.verify(budgetBytes: 100_000_000, repair: true)
        #expect(try verifier.verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)
        #expect(try Fixtures.loadDocument(cache).users?.keys.sorted() == ["a", "b"])
    }
}
