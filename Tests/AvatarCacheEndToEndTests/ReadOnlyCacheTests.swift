import Foundation
import GRDB
import Testing
@testable import AvatarCacheStore
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// A cache built in one place and mounted read-only in another (a pod, an app bundle)
/// answers `lookup`, `stats` and `verify` as it does where it can be written, and changes
/// nothing; what would write it fails with a message that says why (exit 73).
@Suite(.serialized) struct ReadOnlyCacheTests {
    /// The answers to compare: a lookup by user for each system's sample, stats, verify.
    static let users = ["u1001", "u1003", "103", "f00dfacef00dfacef00dfacef00dfacef00dface"]

    func warmedSamples() async throws -> (SampleExports, CacheDirectory) {
        let samples = try SampleExports(label: "read-only")
        _ = try await WarmPipeline(configuration: samples.configuration("cache"), logger: .test).run()
        return (samples, samples.cache("cache"))
    }

    /// Each file of the cache with its size and modification time, to show nothing changed.
    func listing(_ cache: CacheDirectory) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: cache.root.path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: cache.root.appendingPathComponent(name).path)
            result[name] = "\(attributes[.size] ?? "?") \((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
        return result
    }

    /// The shell lines that ask the cache everything a reader asks, each answer behind a marker.
    func readerScript(_ cache: String) -> String {
        let binary = Binary.url.path
        var lines = Self.users.map { "echo '== lookup \($0)'; \(binary) lookup --cache \(cache) --user \($0) --size 55 --json" }
        lines.append("echo '== stats'; \(binary) stats --cache \(cache) --json")
        lines.append("echo '== verify'; \(binary) verify --cache \(cache) --json")
        lines.append("echo '== prune'; \(binary) prune --cache \(cache) --budget 1KB; echo \"prune exit $?\"")
        // What became of a lookup's access, in its debug log (on standard output here).
        lines.append("echo '== access'; \(binary) lookup --cache \(cache) --user \(Self.users[0]) --log-level debug 2>&1 >/dev/null")
        return lines.joined(separator: "\n")
    }

    /// The answers from the cache where it can be written (the prune left out).
    func writableAnswers(_ cache: CacheDirectory) throws -> [String: String] {
        let script = readerScript(cache.root.path).components(separatedBy: "echo '== prune'")[0]
        let result = try Binary.run(["-c", script], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result.stderr)")
        return sections(result.stdout)
    }

    /// The output cut at the markers: "lookup u1001" -> its JSON, …
    func sections(_ output: String) -> [String: String] {
        var result: [String: String] = [:]
        for part in output.components(separatedBy: "== ").dropFirst() {
            let title = String(part.prefix { $0 != "\n" })
            result[title] = String(part.dropFirst(title.count))
        }
        return result
    }

    /// Checks the read-only answers against the writable ones: the same lookups (same
    /// file, tier, colour), the same stats, verify clean, the prune refused (exit 73)
    /// with a message that says the cache is read-only.
    func expectSameAnswers(_ output: Binary.Result, as expected: [String: String]) throws {
        let answers = sections(output.stdout)
        for user in Self.users {
            #expect(answers["lookup \(user)"] == expected["lookup \(user)"] && expected["lookup \(user)"]?.contains("\"file\"") == true,
                    "lookup \(user): \(answers["lookup \(user)"] ?? output.stderr)")
        }
        #expect(answers["stats"] == expected["stats"], "\(answers["stats"] ?? output.stderr)")
        let verify = try JSONSerialization.jsonObject(with: Data((answers["verify"] ?? "{}").utf8)) as? [String: Any]
        #expect((verify?["problems"] as? [Any])?.isEmpty == true && (verify?["entries"] as? Int ?? 0) > 0, "\(answers["verify"] ?? output.stderr)")
        #expect(answers["prune"]?.contains("prune exit 73") == true && output.stderr.contains("is read-only here"), "\(output.stderr)")
        #expect(!output.stderr.contains("attempt to write a readonly database"), "\(output.stderr)")
        #expect(answers["access"]?.contains("the access is not recorded: the cache is read-only here") == true, "\(answers["access"] ?? output.stderr)")
    }

    @Test(.enabled(if: Namespaces.mount, "needs a private mount namespace (unshare -m): run as root"))
    func aReadOnlyBindMountAnswersLookupStatsAndVerifyAsAWritableOneDoes() async throws {
        let (samples, cache) = try await warmedSamples()
        let expected = try writableAnswers(cache)
        let before = try listing(cache)
        // A private mount namespace: the cache bound onto itself read-only, the readers run there.
        let script = """
            mount --bind \(cache.root.path) \(cache.root.path)
            mount -o remount,bind,ro \(cache.root.path)
            touch \(cache.root.path)/probe 2>/dev/null && echo "the mount is writable"
            \(readerScript(cache.root.path))
            """
        let result = try Binary.run(["-m", "--", "/bin/sh", "-c", script], executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(!result.stdout.contains("the mount is writable"), "the bind mount is read-only: \(result.stderr)")
        try expectSameAnswers(result, as: expected)
        #expect(try listing(cache) == before, "nothing in the cache changed")
        _ = samples
    }

    @Test func aDirectoryThisUserCannotWriteIsReadAsIs() async throws {
        try await readAsNobody { _ in }
    }

    /// A cache written before the migrations only writers need (the prune's index): read
    /// where it cannot be written, without them.
    @Test func aCacheOfTheVersionBeforeIsReadWhereItCannotBeWritten() async throws {
        try await readAsNobody { cache in
            let queue = try DatabaseQueue(path: cache.root.appendingPathComponent(CacheIndex.fileName).path)
            try queue.write { db in
                try db.execute(sql: "DROP INDEX entry_by_eviction")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [CacheIndex.evictionOrderMigration])
            }
            try queue.close()
            #expect(try DatabaseQueue(path: cache.root.appendingPathComponent(CacheIndex.fileName).path)
                .read { try CacheIndex.migrator.hasCompletedMigrations($0) } == false)
        }
    }

    /// Warms the samples, takes the answers, `prepare`s the cache, makes it read-only
    /// (0555 directory, 0444 files) and asks again as nobody: the same answers.
    func readAsNobody(_ prepare: (CacheDirectory) throws -> Void) async throws {
        let (samples, cache) = try await warmedSamples()
        let expected = try writableAnswers(cache)
        try prepare(cache)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(at: cache.root.appendingPathComponent(CacheIndex.fileName + suffix)) }
        // 0555 directory, 0444 files. As root (who may write anything), the readers run as
        // nobody, for whom it is as read-only as for any other user.
        for name in try FileManager.default.contentsOfDirectory(atPath: cache.root.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: cache.root.appendingPathComponent(name).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: cache.root.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: cache.root.path) }
        let before = try listing(cache)
        let script = readerScript(cache.root.path)
        let result = getuid() == 0
            ? try Binary.run(["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script], executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
            : try Binary.run(["-c", script], executable: URL(fileURLWithPath: "/bin/sh"))
        try expectSameAnswers(result, as: expected)
        #expect(try listing(cache) == before, "nothing in the cache changed")
        _ = samples
    }

}
