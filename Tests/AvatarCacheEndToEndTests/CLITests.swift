import Foundation
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// The built `avatar-cache` binary: its stdout, stderr and exit codes.
@Suite struct CLITests {
    @Test func warmPrintsASummaryWritesTheReportAndExitsZero() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([
            (id: "1", name: "A", url: server.url("/a.jpg")),
            (id: "2", name: "B", url: server.url("/missing.jpg")),
        ], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let reportPath = directory.appendingPathComponent("report.json").path

        let result = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--report", reportPath, "--budget", "50MB"])

        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("2 profiles, 2 sources"))
        #expect(result.stdout.contains("1 failed (notFound 1)"))
        #expect(result.stderr.contains("missing.jpg"), "the failure is logged")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as! [String: Any]
        for key in ["profiles", "sources", "downloaded", "failed", "failuresByClass", "bytesDownloaded", "cacheBytes", "evicted", "durationSeconds"] {
            #expect(report[key] != nil, "report has \(key)")
        }
        #expect(report["downloaded"] as? Int == 1)
        #expect(report["budgetBytes"] as? Int == 50_000_000)
    }

    @Test func badUsageExits64() throws {
        let result = try Binary.run(["warm", "x.json", "--cache", "/tmp/x", "--budget", "lots"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--budget"))
        let zero = try Binary.run(["warm", "x.json", "--cache", "/tmp/x", "--concurrency", "0"])
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("--concurrency"))
    }

    @Test func unreadableExportExits65AndNamesTheFile() throws {
        let directory = try Fixtures.temporaryDirectory("cli-bad")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Binary.run(["warm", "/nonexistent/users.json", "--cache", directory.appendingPathComponent("cache").path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("/nonexistent/users.json"))
    }

    @Test func pruneShrinksToBudget() throws {
        let server = try FixtureServer(routes: [
            "/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg")),
            "/b.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg")),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-prune")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/a.jpg")), (id: "2", name: "B", url: server.url("/b.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache")
        #expect(try Binary.run(["warm", export, "--cache", cache.path, "--allow-private-networks"]).status == 0)

        // About 84 KB (retina, /a.jpg) + 190 KB (hubble, /b.jpg), both used in the same
        // run; the export's first record counts as the more recent, so /b.jpg goes first.
        let result = try Binary.run(["prune", "--cache", cache.path, "--budget", "250KB"])

        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("evicted 1 entries"))
        let total = try CacheDirectory(root: cache).listFiles().filter { !CacheDirectory.isBookkeeping($0.name) }.reduce(Int64(0)) { $0 + $1.size }
        #expect(total <= 200_000)
        let metadata = try Fixtures.loadMetadata(cache)
        let kept = metadata.entries.filter { $0.value.kind == .photo }.map(\.key)
        #expect(kept == [server.url("/a.jpg")])

        // Nothing to do: metadata.json is not rewritten (same file, same bytes).
        let metadataPath = cache.appendingPathComponent(CacheDirectory.metadataName).path
        let inode = { try (FileManager.default.attributesOfItem(atPath: metadataPath)[.systemFileNumber] as? NSNumber)?.intValue }
        let (inodeBefore, bytesBefore) = (try inode(), try Data(contentsOf: URL(fileURLWithPath: metadataPath)))
        let again = try Binary.run(["prune", "--cache", cache.path, "--budget", "250KB"])
        #expect(again.status == 0 && again.stdout.contains("evicted 0 entries"), "\(again.stdout) \(again.stderr)")
        #expect(try inode() == inodeBefore && (try Data(contentsOf: URL(fileURLWithPath: metadataPath))) == bytesBefore)
    }
}

@Suite struct CLIProfileTests {
    @Test func verifyRepairExitsZeroWhenNothingIsLeftAndAKilledFirstRunIsANote() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-verify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/a.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache")
        #expect(try Binary.run(["warm", export, "--cache", cache.path, "--allow-private-networks"]).status == 0)
        let photo = try #require(try Fixtures.fileNames(in: cache).first { $0.hasSuffix("-900.jpg") })
        try FileManager.default.removeItem(at: cache.appendingPathComponent(photo))

        let found = try Binary.run(["verify", "--cache", cache.path])
        #expect(found.status == 4 && found.stdout.contains("missingFile"), "\(found.stdout)")
        let repaired = try Binary.run(["verify", "--cache", cache.path, "--repair"])
        #expect(repaired.status == 0, "nothing is left after the repair: \(repaired.stdout) \(repaired.stderr)")
        #expect(repaired.stdout.contains("(all repaired)") && !repaired.stdout.contains("1 problems"), "\(repaired.stdout)")
        #expect(try Binary.run(["verify", "--cache", cache.path]).status == 0)

        // A first run killed before it made its index: its marker and a file, no index.
        let first = directory.appendingPathComponent("first")
        try FileManager.default.createDirectory(at: first, withIntermediateDirectories: true)
        try Data("pid 1 started\n".utf8).write(to: first.appendingPathComponent(CacheDirectory.runMarkerName))
        try Data("x".utf8).write(to: first.appendingPathComponent(String(repeating: "a", count: 64) + "-330.jpg"))
        let interrupted = try Binary.run(["verify", "--cache", first.path])
        #expect(interrupted.status == 0 && interrupted.stdout.contains("a first run was killed"), "\(interrupted.stdout) \(interrupted.stderr)")
    }

    @Test func coloursAreTheSameInTwoProcesses() throws {
        let directory = try Fixtures.temporaryDirectory("cli-colours")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = (0..<40).map { (id: "person-\($0)", name: "Person \($0)", url: Optional<String>.none) }
        let export = try Fixtures.writeUsersExport(users, in: directory)
        var colours: [[String: String]] = []
        for run in 0..<2 {
            let cache = directory.appendingPathComponent("cache-\(run)")
            let result = try Binary.run(["warm", export, "--cache", cache.path])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            colours.append(try Fixtures.loadMetadata(cache).profiles.mapValues(\.avatarColorHex))
        }
        #expect(colours[0].count == 40)
        #expect(colours[0] == colours[1])
        #expect(Set(colours[0].values).count > 4, "the palette is used, not one colour")
    }

    @Test func lookupPrintsJSONAndExits66WhenUnknown() throws {
        let directory = try Fixtures.temporaryDirectory("cli-lookup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "u1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        #expect(try Binary.run(["warm", export, "--cache", cache]).status == 0)

        let found = try Binary.run(["lookup", "--cache", cache, "--user", "u1", "--size", "150", "--json"])
        #expect(found.status == 0, "stderr: \(found.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as! [String: Any]
        #expect(answer["initials"] as? String == "AL")
        #expect(answer["kind"] as? String == "monogram")
        #expect(answer["tier"] as? Int == 900)
        #expect((answer["color"] as? String)?.hasPrefix("#") == true)
        #expect((answer["file"] as? String).map { FileManager.default.fileExists(atPath: $0) } == true)

        let missing = try Binary.run(["lookup", "--cache", cache, "--user", "nobody"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("\"nobody\" is not in the cache"))
    }

    /// `--log-level debug` on the commands that had none: lookup says which index it
    /// opened and what became of the access (in the front binary's own path and through
    /// swift-argument-parser alike), stats how it read the index; quiet by default.
    @Test func lookupAndStatsSayWhatTheyReadAtDebug() throws {
        let directory = try Fixtures.temporaryDirectory("cli-lookup-debug")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "u1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        #expect(try Binary.run(["warm", export, "--cache", cache]).status == 0)
        let index = URL(fileURLWithPath: cache).appendingPathComponent("index.sqlite").path
        // The common form (the front's own parse) and a form swift-argument-parser reads.
        for arguments in [["--cache", cache, "--user", "u1", "--log-level", "debug"], ["--user", "u1", "--log-level", "debug", "--cache", cache, "--json", "--scale", "2"]] {
            let found = try Binary.run(["lookup"] + arguments)
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stderr.contains("debug: opened \(index)") && found.stderr.contains("the access is recorded for the prune"), "\(found.stderr)")
            #expect(!found.stderr.contains("u1"), "no user id in the log: \(found.stderr)")
        }
        let quiet = try Binary.run(["lookup", "--cache", cache, "--user", "u1"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let wrong = try Binary.run(["lookup", "--cache", cache, "--user", "u1", "--log-level", "loud"])
        #expect(wrong.status == 64 && wrong.stderr.contains("--log-level: expected one of trace"), "\(wrong.stderr)")
        let stats = try Binary.run(["stats", "--cache", cache, "--log-level", "debug"])
        #expect(stats.status == 0 && stats.stderr.contains("read the index without the lock"), "\(stats.stderr)")
        let verify = try Binary.run(["verify", "--cache", cache, "--log-level", "debug"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let missing = try Binary.run(["stats", "--log-level", "debug"])
        #expect(missing.status == 64 && missing.stderr.contains("--cache <dir>"), "\(missing.stderr)")
    }

    @Test func aTokenWithoutItsHostIsRefused() throws {
        let directory = try Fixtures.temporaryDirectory("cli-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token").path
        try Data("abc\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let export = try Fixtures.writeUsersExport([(id: "u1", name: "A", url: nil)], in: directory)
        let result = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("c").path, "--monica-token-file", tokenFile])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--monica-host"))
        #expect(!result.stderr.contains("abc"))
    }
}

/// The operator's view: exit codes, lock, signals, outputs for cron and CI.
@Suite struct CLIOperationsTests {
    func slowServer(_ count: Int, seconds: Double) throws -> FixtureServer {
        let photo = try Fixtures.photo("astronaut.jpg")
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<count { routes["/slow\(index).jpg"] = .delayed(seconds: seconds, bytes: photo) }
        return try FixtureServer(routes: routes)
    }

    @Test func aSecondRunOnTheSameCacheExitsWithTheLockCode() throws {
        let server = try slowServer(2, seconds: 2)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-lock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport((0..<2).map { (id: "u\($0)", name: "U", url: Optional(server.url("/slow\($0).jpg"))) }, in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let (first, _, _) = try Binary.start(["warm", export, "--cache", cache, "--allow-private-networks"])
        // Wait until the first run holds the lock (its lock file exists and a request arrived).
        let deadline = Date().addingTimeInterval(10)
        while server.requests.isEmpty && Date() < deadline { usleep(50_000) }

        let second = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks"])

        #expect(second.status == 75)
        #expect(second.stderr.contains("in use by another avatar-cache run"))
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        let waited = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--wait", "5"])
        #expect(waited.status == 0, "with nobody else running, --wait just runs")
    }

    @Test func sigtermStopsGracefullyAndTheCacheVerifies() throws {
        let server = try slowServer(30, seconds: 0.5)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-term")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport((0..<30).map { (id: "u\($0)", name: "User \($0)", url: Optional(server.url("/slow\($0).jpg"))) }, in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let report = directory.appendingPathComponent("report.json").path
        let (process, out, _) = try Binary.start(["warm", export, "--cache", cache, "--allow-private-networks", "--requests-in-flight", "2", "--report", report])
        let deadline = Date().addingTimeInterval(10)
        while server.requests.count < 4 && Date() < deadline { usleep(50_000) }

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()

        #expect(process.terminationStatus == 143)
        #expect(server.requests.count < 30, "it stopped admitting work")
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stdout.contains("30 profiles"), "the summary is still printed")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as! [String: Any]
        #expect(json["interrupted"] as? String == "SIGTERM")
        let verify = try Binary.run(["verify", "--cache", cache])
        #expect(verify.status == 0, "verify after SIGTERM: \(verify.stdout) \(verify.stderr)")
        let metadata = try Fixtures.loadMetadata(URL(fileURLWithPath: cache))
        #expect(metadata.entries.values.filter { $0.kind == .photo }.count >= 2, "what finished was saved")
    }

    @Test func cronAndCIOutputs() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-outputs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([
            (id: "1", name: "A", url: server.url("/a.jpg")), (id: "2", name: "B", url: server.url("/gone1.jpg")),
            (id: "3", name: "C", url: server.url("/gone2.jpg")),
        ], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let metrics = directory.appendingPathComponent("avatar-cache.prom").path
        let summary = directory.appendingPathComponent("summary.md").path
        try Data("earlier step\n".utf8).write(to: URL(fileURLWithPath: summary))
        let result = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--log-format", "json",
                                     "--metrics-file", metrics, "--max-failure-rate", "0.5"],
                                    environment: ["GITHUB_STEP_SUMMARY": summary])

        #expect(result.status == 3, "2 of 3 failed, over 0.5")
        let lines = result.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] != nil && object?["message"] != nil, "a JSON log line: \(line)")
        }
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("# TYPE avatar_cache_sources_failed gauge"))
        #expect(prom.contains("avatar_cache_sources_failed{class=\"notFound\"} 2"))
        #expect(prom.contains("avatar_cache_last_run_exit_code 3"))
        #expect(prom.contains("avatar_cache_sources_downloaded 1"))
        let markdown = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(markdown.hasPrefix("earlier step\n"), "appended, not replaced")
        #expect(markdown.contains("| failed | 2 |") && markdown.contains("| notFound | 2 |"))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: directory.path)).contains { $0.contains(".tmp-") })
    }

    @Test func aBadPipelineFileFailsBeforeAnyWork() throws {
        let directory = try Fixtures.temporaryDirectory("cli-pipeline")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.yml").path
        let cache = directory.appendingPathComponent("cache").path
        try Data("cache: \(cache)\ninputs: [x.json]\nttl-hours: soon\n".utf8).write(to: URL(fileURLWithPath: file))

        let result = try Binary.run(["run", file])

        #expect(result.status == 64)
        #expect(result.stderr.contains("bad.yml:3: key \"ttl-hours\": expected a number of hours, found \"soon\""))
        #expect(!FileManager.default.fileExists(atPath: cache), "nothing was done")
    }

    @Test func runUsesThePipelineAndFlagsOverrideIt() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("cli-run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/a.jpg"))], in: directory)
        let file = directory.appendingPathComponent("p.yml").path
        let cache = directory.appendingPathComponent("cache")
        try Data("cache: \(cache.path)\ninputs: [\(export)]\nscales: [2]\nallow-private-networks: true\n".utf8).write(to: URL(fileURLWithPath: file))

        let result = try Binary.run(["run", file, "--scale", "1"])

        #expect(result.status == 0, "stderr: \(result.stderr)")
        let entry = try #require(try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")])
        #expect(Set(entry.files.keys) == ["110", "300"], "--scale 1 overrode scales: [2]")
        let stats = try Binary.run(["stats", "--cache", cache.path, "--json"])
        let figures = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as! [String: Any]
        #expect(figures["photoEntries"] as? Int == 1)
        #expect((figures["bytesByTier"] as? [String: Int])?.keys.sorted() == ["110", "300"])
        #expect((figures["budgetUse"] as? Double ?? 0) > 0)
    }
}

extension CLITests {
    @Test func helpNamesEachOptionsValuesOnceAndSpeaksToUsers() throws {
        // --help names each option's allowed values once.
        let help = try Binary.run(["warm", "--help"])
        let logLevelHelp = try #require(help.stdout.range(of: "--log-level").map { String(help.stdout[$0.lowerBound...].prefix(220)) })
        #expect(logLevelHelp.components(separatedBy: "critical").count - 1 == 1, "\(logLevelHelp)")
        let formatHelp = try #require(help.stdout.range(of: "--format <format>").map { String(help.stdout[$0.lowerBound...].prefix(220)) })
        #expect(formatHelp.components(separatedBy: "nexus-conversations").count - 1 == 1, "\(formatHelp)")
        // Help speaks to users, not of the documents the project came from.
        for command in ["warm", "lookup", "merge", "prune", "verify", "stats", "run"] {
            let text = try Binary.run([command, "--help"]).stdout
            #expect(!text.contains("seed 0") && !text.contains("PRD"), "\(command) --help")
        }
    }
}
