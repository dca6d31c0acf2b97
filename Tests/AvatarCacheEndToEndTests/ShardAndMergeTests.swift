import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheLookup
@testable import AvatarCacheModel
@testable import AvatarCachePipeline
@testable import AvatarCacheStore
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Scale-out: `--shard i/n` runs merged with `avatar-cache merge` give the cache one run
/// gives. Real runs against a real HTTP server on 127.0.0.1, real indexes, real files.
@Suite struct ShardAndMergeTests {
    func warm(_ configuration: WarmConfiguration) async throws -> RunReport {
        try await WarmPipeline(configuration: configuration, logger: .test).run()
    }

    func merge(_ sources: [CacheDirectory], into target: CacheDirectory) throws -> CacheMerge.Outcome {
        try CacheMerge.merge(sources, into: target, budgetBytes: 1_000_000_000, trimRatio: 0.8, wait: 0, logger: .test)
    }

    /// Cache files by name with their bytes' SHA-256.
    func files(_ cache: CacheDirectory) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: cache.root.path) where CacheDirectory.isCacheFileName(name) {
            result[name] = SHA256Hex.of(try [UInt8](Data(contentsOf: cache.root.appendingPathComponent(name))))
        }
        return result
    }

    /// Every user's lookup answer (the file by name, not by directory), without recording accesses.
    func lookups(_ cache: CacheDirectory) throws -> [String: CacheLookup.Answer] {
        let ids = try Fixtures.loadMetadata(cache.root).profiles.keys
        let lookup = try CacheLookup(cache: cache.root, recordsAccess: false)
        var answers: [String: CacheLookup.Answer] = [:]
        for id in ids {
            for points in [30.0, 150.0] {
                var answer = try lookup.blocking.answer(forUser: id, viewSize: points, scale: 3)
                answer.file = answer.file.map { URL(fileURLWithPath: $0.lastPathComponent) }
                answers["\(id) @\(points)"] = answer
            }
        }
        return answers
    }

    func verifyClean(_ cache: CacheDirectory) throws {
        let result = try CacheVerifier(directory: cache).verify(budgetBytes: 1_000_000_000, repair: false)
        #expect(result.problems.isEmpty, "\(cache.root.lastPathComponent): \(result.problems)")
        #expect(result.notices.isEmpty, "\(cache.root.lastPathComponent): \(result.notices)")
    }

    @Test func oneTwoThreeAndSevenShardsMergedGiveTheCacheOfOneRun() async throws {
        let samples = try SampleExports(label: "shards")
        let single = try await warm(samples.configuration("single"))
        let expectedFiles = try files(samples.cache("single"))
        let expectedLookups = try lookups(samples.cache("single"))
        #expect(expectedFiles.count > 60 && expectedLookups.count > 120, "the samples make a real cache")
        #expect(single.failed > 0, "the samples include failing sources, whose monograms must come out the same")
        let requestsOfOneRun = samples.server.requests.count

        for count in [1, 2, 3, 7] {
            let before = samples.server.requests.count
            var shards: [CacheDirectory] = []
            var profiles = 0, downloaded = 0, inline = 0
            for index in 0..<count {
                let report = try await warm(samples.configuration("split\(count)-\(index)", shard: try Shard(index: index, count: count)))
                #expect(report.shard == "\(index)/\(count)")
                #expect(report.profileRecords + report.recordsInOtherShards == single.profileRecords, "every record is read, once taken")
                profiles += report.profiles
                downloaded += report.downloaded
                inline += report.inlinePhotos
                shards.append(samples.cache("split\(count)-\(index)"))
            }
            // Disjoint: every source fetched by one shard only, as often as by one run.
            let paths = samples.server.requests[before...].map(\.path).sorted()
            #expect(paths == samples.server.requests[..<requestsOfOneRun].map(\.path).sorted(),
                    "\(count) shards asked the server for \(paths.count) paths, one run for \(requestsOfOneRun)")
            #expect(downloaded == single.downloaded && inline == single.inlinePhotos)
            #expect(profiles >= single.profiles, "a user is in at least one shard")

            let target = samples.cache("merged\(count)")
            let outcome = try merge(shards, into: target)
            #expect(outcome.profiles == single.profiles)
            #expect(try files(target) == expectedFiles, "\(count) shards: the same files, names and bytes")
            let answers = try lookups(target)
            #expect(answers == expectedLookups, "\(count) shards: the same lookups; differing: \(answers.filter { expectedLookups[$0.key] != $0.value }.keys.sorted())")
            try verifyClean(target)
            // Files are hard-linked from the shards (the same filesystem here), not copied.
            #expect(outcome.sources.map(\.filesCopied).reduce(0, +) == 0)
            #expect(outcome.sources.map(\.filesLinked).reduce(0, +) == expectedFiles.count)
            let name = try #require(expectedFiles.keys.sorted().first)
            let shard = try #require(shards.first { $0.fileSize(name) != nil })
            #expect(try inode(target.root.appendingPathComponent(name)) == inode(shard.root.appendingPathComponent(name)))
        }
    }

    @Test func mergingAgainIsIdempotentAndARerunShardReplacesWhatItBroughtBefore() async throws {
        let server = try FixtureServer(routes: [
            "/a.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg")),
            "/b.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg")),
            "/c.jpg": .ok(bytes: try Fixtures.photo("coffee.jpg")),
            "/d.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg")),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("remerge")
        defer { try? FileManager.default.removeItem(at: directory) }
        var users: [(id: String, name: String, url: String?)] = (0..<40).map { i in
            (id: "u\(i)", name: "User \(i) Name", url: i % 4 == 0 ? nil : server.url(["/a.jpg", "/b.jpg", "/c.jpg"][i % 3]))
        }
        func run(_ name: String, shard: Shard?) async throws -> CacheDirectory {
            let export = try Fixtures.writeUsersExport(users, in: directory)
            var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent(name))
            configuration.pruner.budgetBytes = 1_000_000_000
            configuration.shard = shard
            configuration.ttl = 0
            _ = try await WarmPipeline(configuration: configuration, logger: .test).run()
            return CacheDirectory(root: directory.appendingPathComponent(name))
        }
        let shards = [try await run("s0", shard: Shard(index: 0, count: 2)), try await run("s1", shard: Shard(index: 1, count: 2))]
        let target = CacheDirectory(root: directory.appendingPathComponent("merged"))
        _ = try merge(shards, into: target)
        let first = try files(target)

        // Merging the same shards again changes nothing and brings no file.
        let again = try merge(shards, into: target)
        #expect(try files(target) == first)
        #expect(again.sources.allSatisfy { $0.entriesTaken == 0 && $0.entriesRefreshed == 0 && $0.profilesTaken == 0 && $0.filesLinked == 0 && $0.filesCopied == 0 },
                "\(again.sources)")
        try verifyClean(target)

        // The export changes: the users of c.jpg leave, u1 now shows d.jpg, a new user
        // arrives. A single cache and the shards that hold them are warmed again (a cache
        // keeps what it no longer reads until its prune evicts it: so do the shards).
        let single = try await run("single", shard: nil)
        let cUsers = Set(users.filter { $0.url == server.url("/c.jpg") }.map(\.id))
        users.removeAll { cUsers.contains($0.id) }
        users[users.firstIndex { $0.id == "u1" }!].url = server.url("/d.jpg")
        users.append((id: "newcomer", name: "New Comer", url: nil))
        _ = try await run("single", shard: nil)
        let owners = Set(["/d.jpg", "/a.jpg"].map { Shard.of(key: server.url($0), count: 2) } + [Shard.of(key: "newcomer", count: 2)])
        for index in owners.sorted() { _ = try await run("s\(index)", shard: Shard(index: index, count: 2)) }
        let rerun = try merge(owners.sorted().map { shards[$0] }, into: target)
        #expect(rerun.sources.allSatisfy { $0.entriesTaken + $0.entriesRefreshed > 0 }, "\(rerun.sources)")
        var metadata = try Fixtures.loadMetadata(target.root)
        #expect(metadata.profiles["u1"]?.photoSource == server.url("/d.jpg") && metadata.profiles["u1"]?.kind == .photo)
        #expect(metadata.profiles["newcomer"]?.kind == .monogram)
        #expect(try files(target) == files(single))
        #expect(try lookups(target) == lookups(single))
        try verifyClean(target)

        // The shard holding c.jpg prunes everything it holds; merged again, what it had
        // brought goes from the target too (what another shard also brought stays).
        let cShard = shards[Shard.of(key: server.url("/c.jpg"), count: 2)]
        let session = try CacheSession.open(cShard, wait: 0, create: false, logger: .test)
        let evicted = try session.finish(pruner: Pruner(budgetBytes: 1, trimRatio: 1), entriesChanged: false).plan.evicted
        session.close()
        #expect(evicted.contains(server.url("/c.jpg")))
        let other = try Fixtures.loadMetadata(shards[1 - Shard.of(key: server.url("/c.jpg"), count: 2)].root)
        let pruned = try merge([cShard], into: target)
        #expect(pruned.sources[0].entriesDropped == evicted.filter { other.entries[$0] == nil }.count)
        metadata = try Fixtures.loadMetadata(target.root)
        #expect(metadata.entries[server.url("/c.jpg")] == nil)
        #expect(Set(metadata.entries.keys) == Set(other.entries.keys), "the target holds what the other shard brought")
        #expect(Set(try files(target).keys) == metadata.referencedFiles, "the dropped entries' files are deleted")
        try verifyClean(target)
    }

    @Test func theNewestAccessWinsWhicheverOrderTheCachesAreMerged() async throws {
        let server = try FixtureServer(routes: ["/p.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("newest")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "u", name: "U", url: server.url("/p.jpg"))], in: directory)
        func run(_ name: String) async throws -> CacheDirectory {
            _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent(name)), logger: .test).run()
            return CacheDirectory(root: directory.appendingPathComponent(name))
        }
        let older = try await run("older")
        // The photo changed on the server: the later cache has other content.
        server.setRoute("/p.jpg", .ok(bytes: try Fixtures.photo("retina.jpg")))
        let newer = try await run("newer")
        let newContent = try #require(Fixtures.loadMetadata(newer.root).entries[server.url("/p.jpg")]?.contentSHA256)
        for (name, order) in [("m1", [older, newer]), ("m2", [newer, older])] {
            let target = CacheDirectory(root: directory.appendingPathComponent(name))
            _ = try merge(order, into: target)
            let entry = try #require(Fixtures.loadMetadata(target.root).entries[server.url("/p.jpg")])
            #expect(entry.contentSHA256 == newContent, "merged as \(order.map(\.root.lastPathComponent))")
            #expect(try files(target) == files(newer), "the older content's files are not kept")
            try verifyClean(target)
        }
    }

    @Test func theShardIsAPipelineKeyAndAFlagAndBadValuesAreUsageErrors() throws {
        let file = try PipelineFile.parse("cache: c\ninputs: [users.json]\nshard: ${TASK_ID}/${TASK_COUNT}\n", file: "p.yml",
                                          environment: ["TASK_ID": "4", "TASK_COUNT": "7"])
        #expect(file[Settings.shard] == (try Shard(index: 4, count: 7)))
        #expect(throws: PipelineFile.Errors.self) {
            try PipelineFile.parse("cache: c\nshard: 7/7\n", file: "p.yml", environment: [:])
        }
        let directory = try Fixtures.temporaryDirectory("shard-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: nil)], in: directory)
        let bad = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("c").path, "--shard", "3/3"])
        #expect(bad.status == 64, "\(bad.stderr)")
        #expect(bad.stderr.contains("between 0 and 2"), "\(bad.stderr)")
        let ok = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("c").path, "--shard", "0/1"])
        #expect(ok.status == 0 && ok.stdout.contains("shard 0/1"), "\(ok.stdout) \(ok.stderr)")
        // merge refuses the target as a source, and two caches of the same shard.
        let c = directory.appendingPathComponent("c").path
        let intoItself = try Binary.run(["merge", c, "--into", c])
        #expect(intoItself.status == 64 && intoItself.stderr.contains("the target itself"), "\(intoItself.stderr)")
        try FileManager.default.copyItem(atPath: c, toPath: c + "-copy")
        let twice = try Binary.run(["merge", c, c + "-copy", "--into", directory.appendingPathComponent("m").path])
        #expect(twice.status == 64 && twice.stderr.contains("both shard 0/1"), "\(twice.stderr)")
        let merged = try Binary.run(["merge", c, "--into", directory.appendingPathComponent("m").path])
        #expect(merged.status == 0 && merged.stdout.contains("merged 1 cache into"), "\(merged.stdout) \(merged.stderr)")
        // A cache still being written (its lock held) is exit 75 before the target is touched.
        let held = try CacheLock.acquire(in: CacheDirectory(root: URL(fileURLWithPath: c)))
        let busy = try Binary.run(["merge", c, "--into", directory.appendingPathComponent("m2").path])
        held.release()
        #expect(busy.status == 75, "\(busy.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("m2").path), "the target is not created")
        let notACache = try Binary.run(["merge", directory.path, "--into", directory.appendingPathComponent("m").path])
        #expect(notACache.status == 73 && notACache.stderr.contains("is not an avatar-cache cache"), "\(notACache.stderr)")
    }

    @Test(.enabled(if: Namespaces.mount, "needs a private mount namespace (unshare -m): run as root"))
    func acrossFilesystemsTheFilesAreCopied() async throws {
        // The target on a tmpfs of a private mount namespace (unshare -m): another
        // filesystem, where a hard link fails with EXDEV. Merge and verify run inside.
        let samples = try SampleExports(label: "shards")
        _ = try await warm(samples.configuration("shard", shard: try Shard(index: 0, count: 1)))
        let expected = try files(samples.cache("shard"))
        let mount = samples.directory.appendingPathComponent("tmpfs").path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let binary = Binary.url.path
        let script = """
            set -eu
            mount -t tmpfs tmpfs \(mount)
            \(binary) merge \(samples.cache("shard").root.path) --into \(mount)/merged
            \(binary) verify --cache \(mount)/merged
            cd \(mount)/merged && sha256sum *-*.jpg *-*.png
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "--", "/bin/sh", "-c", script]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stdout)\n\(stderr)")
        #expect(stdout.contains("files: 0 linked, \(expected.count) copied"), "\(stdout)")
        #expect(stdout.contains(": ok"), "verify is clean: \(stdout)")
        var copied: [String: String] = [:]
        for line in stdout.split(separator: "\n") where line.count > 66 && line.contains("  ") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count == 2 { copied[String(parts[1])] = String(parts[0]) }
        }
        #expect(copied == expected, "every file copied, byte for byte")
    }

    func inode(_ url: URL) throws -> UInt64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw StoreError.io(path: url.path, reason: "stat failed") }
        return UInt64(info.st_ino)
    }
}
