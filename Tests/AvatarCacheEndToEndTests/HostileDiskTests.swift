import Foundation
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Kills, broken metadata, full and read-only disks: the previous cache always survives
/// (hostile exports: AvatarCacheExportsTests' HostileInputTests).
@Suite(.serialized) struct HostileDiskTests {
    /// A server with `count` distinct photos (each with its own bytes) and a small delay,
    /// so a run lasts long enough to be killed at many moments.
    func corpusServer(_ count: Int, delay: Double) throws -> FixtureServer {
        let names = ["retina.jpg", "hubble.jpg", "astronaut.jpg", "coffee.jpg", "rocket.jpg", "motorcycle.webp", "camera.png", "chelsea.jpg"]
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<count {
            var bytes = try Fixtures.photo(names[index % names.count])
            if bytes.starts(with: [0xFF, 0xD8]) {
                let comment = Array("profile \(index)".utf8)
                bytes.insert(contentsOf: [0xFF, 0xFE, 0, UInt8(comment.count + 2)] + comment, at: 2)
            } else {
                bytes += Array("trailer \(index)".utf8)   // PNG and WebP decoders ignore trailing bytes
            }
            routes["/p\(index)"] = .delayed(seconds: delay, bytes: bytes)
        }
        return try FixtureServer(routes: routes)
    }

    func cli(_ arguments: [String]) throws -> Binary.Result { try Binary.run(arguments) }

    @Test func killedAtTwentyMomentsTheCacheStaysConsistent() throws {
        let server = try corpusServer(24, delay: 0.05)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = (0..<24).map { (id: "u\($0)", name: "User \($0)", url: Optional(server.url("/p\($0)"))) }
        let firstHalf = try Fixtures.writeUsersExport(Array(users.prefix(8)), in: directory, name: "first.json")
        let everyone = try Fixtures.writeUsersExport(users, in: directory, name: "all.json")
        let base = directory.appendingPathComponent("base")
        let flags = ["--allow-private-networks", "--concurrency", "4", "--budget", "1500KB"]
        #expect(try cli(["warm", firstHalf, "--cache", base.path] + flags).status == 0)
        let baseEntries = try Fixtures.loadMetadata(base).entries.filter { $0.value.kind == .photo }.count

        // How long a whole run takes from the base state.
        let probe = directory.appendingPathComponent("probe")
        try FileManager.default.copyItem(at: base, to: probe)
        let started = Date()
        #expect(try cli(["warm", everyone, "--cache", probe.path] + flags).status == 0)
        let duration = Date().timeIntervalSince(started)

        var inconsistent = 0, killedMidRun = 0
        for index in 0..<20 {
            let cache = directory.appendingPathComponent("kill-\(index)")
            try FileManager.default.copyItem(at: base, to: cache)
            let process = try Binary.startQuietly(["warm", everyone, "--cache", cache.path] + flags)
            usleep(useconds_t(duration * (Double(index) + 0.5) / 20 * 1_000_000))
            if process.isRunning { killedMidRun += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            let result = try CacheVerifier(directory: CacheDirectory(root: cache)).verify(budgetBytes: 1_500_000, repair: false)
            if !result.problems.isEmpty {
                inconsistent += 1
                Issue.record("kill \(index) at \(Int(duration * (Double(index) + 0.5) / 20 * 1000)) ms: \(result.problems)")
            }
            let entries = try Fixtures.loadMetadata(cache).entries.filter { $0.value.kind == .photo }.count
            #expect(entries >= min(baseEntries, 1), "kill \(index): the previous cache is there")
            if index % 5 == 4 {
                // The next run completes and cleans up.
                #expect(try cli(["warm", everyone, "--cache", cache.path] + flags).status == 0)
                let after = try CacheVerifier(directory: CacheDirectory(root: cache)).verify(budgetBytes: 1_500_000, repair: false)
                #expect(after.problems.isEmpty, "after a full run: \(after.problems)")
                #expect(after.notices.isEmpty, "after a full run: \(after.notices)")
                #expect(!(try Fixtures.fileNames(in: cache)).contains { $0.hasPrefix(".tmp-") || $0 == CacheDirectory.runMarkerName })
            }
        }
        #expect(killedMidRun >= 15, "the kills landed during runs (\(killedMidRun) of 20)")
        HostileLedger.record("crashes", "SIGKILL", tried: "a 24-photo run over budget killed at 20 moments spread over its \(String(format: "%.1f", duration)) s (\(killedMidRun) mid-run)", count: 20, outcome: "verify clean after every kill (an interrupted run's leftovers noted, swept by the next run); every following run completed and cleaned up", inconsistentCaches: inconsistent)
    }

    @Test func aDamagedIndexIsAClearErrorAndRecoveryKeepsTheFiles() throws {
        let server = try corpusServer(4, delay: 0)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("metadata")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport((0..<4).map { (id: "u\($0)", name: "U", url: Optional(server.url("/p\($0)"))) }, in: directory)
        let cache = directory.appendingPathComponent("cache")
        let warm = { (report: String) in
            try self.cli(["warm", export, "--cache", cache.path, "--allow-private-networks", "--report", report])
        }
        let reportPath = directory.appendingPathComponent("report.json").path
        let report = { try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as! [String: Any] }
        #expect(try warm(reportPath).status == 0)
        let metadataURL = cache.appendingPathComponent("metadata.json")
        let indexURL = cache.appendingPathComponent(CacheIndex.fileName)
        let good = try Data(contentsOf: metadataURL)
        let goodIndex = try Data(contentsOf: indexURL)
        let filesBefore = try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

        // metadata.json is written from the index: damaged, the next run writes it again.
        let documentDamages: [(String, Data)] = [
            ("garbage", garbage), ("truncated", good.prefix(good.count / 2)), ("empty", Data()),
            ("wrong schema", Data(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"schemaVersion\":\(MetadataDocument.schemaVersion)", with: "\"schemaVersion\":99").utf8)),
        ]
        for (name, bytes) in documentDamages {
            try bytes.write(to: metadataURL)
            #expect(try warm(reportPath).status == 0, "\(name)")
            #expect(try report()["decoded"] as? Int == 0, "\(name)")
            #expect(try Fixtures.loadDocument(cache).entries.count == 4, "\(name): metadata.json written again")
        }

        // The index is the truth: damaged, the run stops before changing anything.
        let indexDamages: [(String, Data)] = [("garbage", garbage), ("truncated", goodIndex.prefix(100))]
        for (name, bytes) in indexDamages {
            try bytes.write(to: indexURL)
            let result = try cli(["warm", export, "--cache", cache.path, "--allow-private-networks"])
            #expect(result.status == 73, "\(name): \(result.stderr)")
            #expect(result.stderr.contains(indexURL.path) && result.stderr.contains("move it aside"), "\(name): \(result.stderr)")
            #expect(try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName) == filesBefore, "\(name): no file touched")
            #expect(try Data(contentsOf: indexURL) == bytes, "\(name): the damaged index is left for inspection")
        }
        // Recovery as the message says: move it aside; the next run rebuilds it from
        // metadata.json (nothing fetched again) ...
        try FileManager.default.moveItem(at: indexURL, to: cache.appendingPathComponent("index.sqlite.bad"))
        #expect(try warm(reportPath).status == 0)
        #expect(try report()["decoded"] as? Int == 0 && report()["fresh"] as? Int == 4, "entries back from metadata.json")
        // ... and without either, every file is re-used by content.
        for name in [CacheIndex.fileName, CacheDirectory.metadataName] {
            try FileManager.default.removeItem(at: cache.appendingPathComponent(name))
        }
        #expect(try warm(reportPath).status == 0)
        #expect(try report()["decoded"] as? Int == 0 && report()["reusedIdentical"] as? Int == 4, "every photo re-used, none decoded again")
        HostileLedger.record("disk", "damaged index or metadata", tried: documentDamages.map(\.0).joined(separator: ", ") + " metadata.json; " + indexDamages.map(\.0).joined(separator: ", ") + " index.sqlite", count: documentDamages.count + indexDamages.count, outcome: "metadata.json written again from the index (0 decoded); a damaged index: exit 73 naming it and the way out, nothing changed; moved aside, rebuilt from metadata.json (0 fetched), or from the files by content (0 decoded)")
    }

    @Test func aFullOrReadOnlyDiskLeavesThePreviousCache() throws {
        let server = try corpusServer(16, delay: 0)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("disk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let mountPoint = directory.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard shell("mount -t tmpfs -o size=700k avatar-cache-test \(mountPoint.path)") == 0 else {
            Issue.record("cannot mount a small tmpfs to fill (needs root)")
            return
        }
        defer { _ = shell("umount \(mountPoint.path)") }
        let cache = mountPoint.appendingPathComponent("cache")
        let small = try Fixtures.writeUsersExport((0..<2).map { (id: "u\($0)", name: "U", url: Optional(server.url("/p\($0 + 2)"))) }, in: directory, name: "small.json")
        let large = try Fixtures.writeUsersExport((0..<16).map { (id: "u\($0)", name: "U", url: Optional(server.url("/p\($0)"))) }, in: directory, name: "large.json")
        #expect(try cli(["warm", small, "--cache", cache.path, "--allow-private-networks"]).status == 0)
        let before = try Fixtures.loadMetadata(cache)

        let full = try cli(["warm", large, "--cache", cache.path, "--allow-private-networks"])

        #expect(full.status == 73)
        #expect(full.stderr.contains("No space left on device"), "\(full.stderr)")
        // What was cached stays cached (a run commits as it goes: some new entries may be there too).
        let afterFull = try Fixtures.loadMetadata(cache)
        for (key, entry) in before.entries { #expect(afterFull.entries[key]?.contentSHA256 == entry.contentSHA256, "\(key) kept") }
        #expect(try CacheVerifier(directory: CacheDirectory(root: cache)).verify(budgetBytes: 100_000_000, repair: false).problems.isEmpty)

        let contents = { try Fixtures.fileNames(in: cache).map { ($0, try Data(contentsOf: cache.appendingPathComponent($0))) } }
        let bytesBefore = try contents()
        #expect(shell("mount -o remount,ro \(mountPoint.path)") == 0)
        let readOnly = try cli(["warm", large, "--cache", cache.path, "--allow-private-networks"])
        #expect(readOnly.status == 73)
        #expect(readOnly.stderr.contains("Read-only file system"), "\(readOnly.stderr)")
        #expect(try contents().elementsEqual(bytesBefore, by: { $0.0 == $1.0 && $0.1 == $1.1 }), "not a byte changed")
        HostileLedger.record("disk", "full and read-only", tried: "a 700 KB filesystem filled mid-run; the same remounted read-only", count: 2, outcome: "exit 73 with the system's reason (No space left on device, Read-only file system); every entry cached before is still there with its files and verify is clean (what the run committed before the disk filled stays); read-only: not a byte changed")
    }

    @Test func nothingIsWrittenOutsideTheCacheAndNothingIsWorldWritable() throws {
        let server = try corpusServer(2, delay: 0)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("paths")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([
            (id: "../../../../tmp/evil", name: "../../etc/passwd", url: server.url("/p0")),
            (id: "/etc/shadow", name: "A\u{0}B", url: server.url("/p1") + "/../../../../etc/passwd"),
            (id: "x\ny", name: "%2e%2e%2f", url: nil),
        ], in: directory)
        let cache = directory.appendingPathComponent("cache")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(try cli(["warm", export, "--cache", cache.path, "--allow-private-networks"]).status == 0)
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(after.subtracting(before) == ["cache"])
        var loose = 0
        for name in try Fixtures.fileNames(in: cache) {
            let mode = try FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent(name).path)[.posixPermissions] as! Int
            if mode & 0o002 != 0 { loose += 1 }
            #expect(CacheDirectory.isCacheFileName(name) || CacheDirectory.isBookkeeping(name), "unexpected file \(name)")
        }
        #expect(loose == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: cache.path)[.posixPermissions] as! Int
        #expect(mode & 0o002 == 0)
        HostileLedger.record("disk", "paths and permissions", tried: "ids and names with ../, absolute paths, NUL, newlines; a URL path climbing out", count: 3, outcome: "files only in the cache, named by hashes; files 0644, directory 0755")
    }

    private func shell(_ command: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
