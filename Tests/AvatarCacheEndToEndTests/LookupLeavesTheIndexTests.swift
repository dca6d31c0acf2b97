import Foundation
import Testing
import AvatarCacheLookup
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheTestKit

/// Lookups leave the index as they found it: a lookup process (`avatar-cache lookup`, one
/// a notification) records its access and leaves no write-ahead log behind; a library
/// reader answering beside many warms keeps the log bounded; a lookup still counts as an
/// access for the prune. The built binaries, a real server on 127.0.0.1, real files.
@Suite struct LookupLeavesTheIndexTests {
    static func walSize(_ cache: URL) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent("index.sqlite-wal").path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Two photos: retina (/a.jpg, about 84 KB cached) and hubble (/b.jpg, about 190 KB),
    /// warmed in one run whose first record counts as the more recent: without a lookup, a
    /// prune to 250 KB evicts /b.jpg (CLITests.pruneShrinksToBudget).
    static func warmedCache(_ label: String) throws -> (server: FixtureServer, directory: URL, cache: URL, warm: [String]) {
        let server = try FixtureServer(routes: [
            "/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg")),
            "/b.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg")),
        ])
        let directory = try Fixtures.temporaryDirectory(label)
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/a.jpg")), (id: "2", name: "B", url: server.url("/b.jpg"))],
                                                   in: directory)
        let cache = directory.appendingPathComponent("cache")
        let warm = ["warm", export, "--cache", cache.path, "--allow-private-networks", "--log-level", "error"]
        let result = try Binary.run(warm)
        #expect(result.status == 0, "\(result.stderr)")
        return (server, directory, cache, warm)
    }

    @Test func lookupProcessesLeaveNoLogAndTheirAccessesOutliveAPrune() throws {
        let (server, directory, cache, _) = try Self.warmedCache("lookup-processes")
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        #expect(Self.walSize(cache) == 0, "a warm leaves the log empty")

        // Each process records its access: user 2's photo, the one a prune would evict first.
        for round in 0..<40 {
            let lookup = try Binary.run(["lookup", "--cache", cache.path, "--user", round % 4 == 0 ? "1" : "2"])
            #expect(lookup.status == 0 && lookup.stdout.hasSuffix(".jpg\n"), "\(lookup.stdout) \(lookup.stderr)")
            // 23 KB a process grew it before: 40 processes, about 1 MB, never folded back.
            #expect(Self.walSize(cache) == 0, "after lookup process \(round + 1), the log is \(Self.walSize(cache)) bytes")
        }
        // Journaled (a line a process, no transaction): the prune folds them in first.
        let journal = try String(contentsOf: cache.appendingPathComponent(AccessJournal.fileName), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 40, "every process's access journaled")
        #expect(journal.hasSuffix("\t\(server.url("/b.jpg"))\n"), "the last lookups were of user 2's photo")

        let prune = try Binary.run(["prune", "--cache", cache.path, "--budget", "250KB"])
        #expect(prune.status == 0 && prune.stdout.contains("evicted 1 entries"), "\(prune.stdout) \(prune.stderr)")
        let kept = try CacheStore.snapshot(CacheDirectory(root: cache)).entries.filter { $0.value.kind == .photo }.map(\.key)
        #expect(kept == [server.url("/b.jpg")], "the photo looked up survives; the one looked up less long ago goes")
        let verify = try Binary.run(["verify", "--cache", cache.path])
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    /// Accesses a lookup journaled while a warm held the index count for the next prune,
    /// which folds them in.
    @Test func aPruneFoldsTheJournalInFirst() throws {
        let (server, directory, cache, _) = try Self.warmedCache("lookup-journal-prune")
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        #expect(AccessJournal.append([server.url("/b.jpg"): Date().timeIntervalSince1970 + 1], toCacheAt: cache.path))
        let prune = try Binary.run(["prune", "--cache", cache.path, "--budget", "250KB"])
        #expect(prune.status == 0 && prune.stdout.contains("evicted 1 entries"), "\(prune.stdout) \(prune.stderr)")
        let kept = try CacheStore.snapshot(CacheDirectory(root: cache)).entries.filter { $0.value.kind == .photo }.map(\.key)
        #expect(kept == [server.url("/b.jpg")], "the journaled access counted")
        #expect(!FileManager.default.fileExists(atPath: cache.appendingPathComponent(AccessJournal.fileName).path))
        let verify = try Binary.run(["verify", "--cache", cache.path])
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    /// The lookup process that finds the journal past its fold size folds it into the
    /// index (its own access with it), and still leaves no log.
    @Test func theLookupThatFindsTheJournalGrownFoldsItIn() throws {
        let (server, directory, cache, _) = try Self.warmedCache("lookup-journal-fold")
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let later = Date().timeIntervalSince1970 + 1
        var filler: [String: Double] = [:]
        for index in 0..<2_000 { filler["https://elsewhere.example/\(index).jpg"] = later }
        #expect(AccessJournal.append(filler, toCacheAt: cache.path))
        #expect(AccessJournal.append([server.url("/b.jpg"): later], toCacheAt: cache.path))
        let journal = cache.appendingPathComponent(AccessJournal.fileName)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int)
        #expect(size >= AccessJournal.foldSize)

        let lookup = try Binary.run(["lookup", "--cache", cache.path, "--user", "1"])
        #expect(lookup.status == 0, "\(lookup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: journal.path), "folded into the index")
        #expect(Self.walSize(cache) == 0)
        let entries = try CacheStore.snapshot(CacheDirectory(root: cache)).entries
        let b = try #require(entries[server.url("/b.jpg")]?.lastAccess)
        let a = try #require(entries[server.url("/a.jpg")]?.lastAccess)
        #expect(abs(b.timeIntervalSince1970 - later) < 0.01, "the journal's access in the index")
        #expect(a.timeIntervalSince1970 > later - 60, "the process's own access in the index")
    }

    /// A server's lookup answering the whole time while warms of the same cache come and
    /// go (scaled down: eight warms, answers between and during them): every answer right,
    /// the log bounded, and the accesses recorded.
    @Test func aLibraryReaderBesideManyWarmsKeepsTheLogBounded() async throws {
        let (server, directory, cache, warm) = try Self.warmedCache("lookup-beside-warms")
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let lookup = try CacheLookup(cache: cache)
        let expected = try await lookup.answer(forUser: "2", viewSize: 55, scale: 3)
        let file = try #require(expected.file)
        let other = try #require(try await lookup.answer(forUser: "1", viewSize: 55, scale: 3).file)
        let stop = Flag()
        let answering = Task.detached { () -> (answers: Int, wrong: Int) in
            var answers = 0, wrong = 0
            while !stop.isSet {
                let user = answers % 2 == 0 ? "2" : "1"
                let answer = try await lookup.answer(forUser: user, viewSize: 55, scale: 3)
                // The same file every time (the warms change nothing), and the file there.
                if answer.kind != .photo || answer.file != (user == "2" ? file : other)
                    || answer.file.map({ FileManager.default.fileExists(atPath: $0.path) }) != true { wrong += 1 }
                answers += 1
                if answers % 64 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            }
            return (answers, wrong)
        }
        // The log's size sampled all along, during the warms as well as between them.
        let sampling = Task.detached { () -> (largest: Int64, samples: Int) in
            var largest: Int64 = 0, samples = 0
            while !stop.isSet {
                largest = max(largest, Self.walSize(cache))
                samples += 1
                try? await Task.sleep(nanoseconds: 2_000_000)
            }
            return (largest, samples)
        }
        for _ in 0..<8 {
            let result = try Binary.run(warm)
            #expect(result.status == 0, "\(result.stderr)")
        }
        stop.set()
        let (answers, wrong) = try await answering.value
        let (largest, samples) = await sampling.value
        #expect(answers > 100 && wrong == 0, "\(answers) answers, \(wrong) wrong")
        #expect(samples > 8 && largest < 4_200_000, "the log reached \(largest) bytes (\(samples) samples)")
        await lookup.flush()
        #expect(try await lookup.answer(forUser: "2", viewSize: 55, scale: 3).file == file)
        #expect(Self.walSize(cache) < 4_200_000)
        let verify = try Binary.run(["verify", "--cache", cache.path])
        #expect(verify.status == 0, "\(verify.stdout)")
    }
}

/// A flag one task sets and another reads.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
