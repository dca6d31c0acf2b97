import Foundation
import Testing
@testable import AvatarCacheLookup
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// The index under a writer: lookups read while a warm-up writes, and a SIGKILL at any
/// instant of a large run leaves an index that opens, verifies and answers.
@Suite(.serialized) struct IndexConcurrencyTests {
    /// A users export of `count` profiles without photos, all named alike (so a run is
    /// the store's work, not drawing: eight monograms, one per palette colour).
    static func storeExport(_ count: Int, prefix: String, in directory: URL, name: String) throws -> String {
        var text = "{\"users\": [\n"
        for index in 0..<count {
            text += (index == 0 ? "" : ",") + "{\"id\": \"\(prefix)\(index)\", \"displayName\": \"Kim Lee\", \"email\": \"k\(index)@example.com\"}\n"
        }
        text += "]}\n"
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func killedWhileWritingALargeIndexTheCacheStaysConsistent() throws {
        let directory = try Fixtures.temporaryDirectory("kill-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The base cache knows users a0…a29999; the killed runs add b0…b29999.
        let first = try Self.storeExport(30_000, prefix: "a", in: directory, name: "a.json")
        let both = directory.appendingPathComponent("both.json").path
        try (try String(contentsOfFile: first, encoding: .utf8).replacingOccurrences(of: "]}\n", with: ",")
             + (try String(contentsOfFile: Self.storeExport(30_000, prefix: "b", in: directory, name: "b.json"), encoding: .utf8))
                .replacingOccurrences(of: "{\"users\": [\n", with: ""))
            .write(toFile: both, atomically: true, encoding: .utf8)
        let base = directory.appendingPathComponent("base")
        #expect(try Binary.run(["warm", first, "--cache", base.path]).status == 0)

        let probe = directory.appendingPathComponent("probe")
        try FileManager.default.copyItem(at: base, to: probe)
        let started = Date()
        #expect(try Binary.run(["warm", both, "--cache", probe.path]).status == 0)
        let duration = Date().timeIntervalSince(started)

        var killedMidRun = 0, inconsistent = 0
        let moments = 8
        for index in 0..<moments {
            let cache = directory.appendingPathComponent("kill-\(index)")
            try FileManager.default.copyItem(at: base, to: cache)
            let process = try Binary.startQuietly(["warm", both, "--cache", cache.path])
            // Spread over the first three quarters of the probe's duration: a run's length
            // varies with the machine's load, and a kill after its end proves nothing.
            usleep(useconds_t(duration * 0.75 * (Double(index) + 0.5) / Double(moments) * 1_000_000))
            if process.isRunning { killedMidRun += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            let result = try CacheVerifier(directory: CacheDirectory(root: cache)).verify(budgetBytes: 100_000_000, repair: false)
            #expect(result.problems.isEmpty, "kill \(index): \(result.problems)")
            if !result.problems.isEmpty { inconsistent += 1 }
            // Every user the base cache knew still resolves to a picture.
            let lookup = try CacheLookup(cache: cache)
            for user in ["a0", "a12345", "a29999"] {
                let answer = try lookup.blocking.answer(forUser: user, viewSize: 55, scale: 3)
                #expect(answer.kind == .monogram && answer.file.map { FileManager.default.fileExists(atPath: $0.path) } == true, "kill \(index): \(user)")
            }
        }
        #expect(killedMidRun >= moments / 2, "the kills landed during runs (\(killedMidRun) of \(moments))")
        // The next run completes and leaves a clean cache with everyone.
        let last = directory.appendingPathComponent("kill-\(moments - 1)")
        #expect(try Binary.run(["warm", both, "--cache", last.path]).status == 0)
        let after = try CacheVerifier(directory: CacheDirectory(root: last)).verify(budgetBytes: 100_000_000, repair: false)
        #expect(after.problems.isEmpty && after.notices.isEmpty, "\(after.problems) \(after.notices)")
        #expect(try CacheLookup(cache: last).blocking.answer(forUser: "b29999", viewSize: 55, scale: 3).kind == .monogram)
        HostileLedger.record("crashes", "SIGKILL while the index is written", tried: "a 60,000-profile run (30,000 new) killed at \(moments) moments spread over the first three quarters of its \(String(format: "%.1f", duration)) s (\(killedMidRun) mid-run)", count: moments, outcome: "verify clean after every kill, every known user still looked up; the following run completed", inconsistentCaches: inconsistent)
    }

    @Test func lookupsAnswerWhileAWarmUpWrites() throws {
        let directory = try Fixtures.temporaryDirectory("lookup-during-warm")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Self.storeExport(20_000, prefix: "a", in: directory, name: "a.json")
        let renamed = try Self.storeExport(40_000, prefix: "a", in: directory, name: "more.json")
        let cache = directory.appendingPathComponent("cache")
        #expect(try Binary.run(["warm", first, "--cache", cache.path]).status == 0)

        let lookup = try CacheLookup(cache: cache)
        let process = try Binary.startQuietly(["warm", renamed, "--cache", cache.path])
        var answered = 0, slowest = 0.0
        while process.isRunning {
            let started = Date()
            let answer = try lookup.blocking.answer(forUser: "a\(answered % 20_000)", viewSize: 55, scale: 3)
            slowest = max(slowest, Date().timeIntervalSince(started))
            #expect(answer.kind == .monogram && answer.initials == "KL")
            answered += 1
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(answered > 20, "lookups went on during the run (\(answered))")
        #expect(slowest < 5, "no lookup waited long for the writer (slowest \(slowest) s)")
        #expect(try lookup.blocking.answer(forUser: "a39999", viewSize: 55, scale: 3).kind == .monogram, "the run's new users are there once it is done")
    }
}
