import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheStore
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Incremental runs and retries: what cron and CI rely on.
@Suite struct IncrementalRunTests {
    func warm(_ configuration: WarmConfiguration) async throws -> RunReport {
        try await WarmPipeline(configuration: configuration, logger: .test).run()
    }

    func setUp(_ label: String, routes: [String: FixtureServer.Reply]) throws -> (FixtureServer, URL, String) {
        let server = try FixtureServer(routes: routes)
        let directory = try Fixtures.temporaryDirectory(label)
        let export = try Fixtures.writeUsersExport(routes.keys.sorted().map { (id: $0, name: "U", url: Optional(server.url($0))) }, in: directory)
        return (server, directory, export)
    }

    @Test func aStaleEntryRevalidatesWith304AndKeepsItsFiles() async throws {
        let (server, directory, export) = try setUp("304", routes: ["/a.jpg": .conditional(bytes: try Fixtures.photo("retina.jpg"), etag: "\"v1\"")])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        var configuration = Fixtures.configuration(exports: [export], cache: cache)
        configuration.ttl = 0
        _ = try await warm(configuration)
        let before = try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")]!
        let filesBefore = try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName)
        let modified = try FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent(before.filename).path)[.modificationDate] as! Date

        let report = try await warm(configuration)

        #expect(report.notModified == 1 && report.downloaded == 0 && report.decoded == 0)
        let second = server.requests.filter { $0.path == "/a.jpg" }.last!
        #expect(second.headers.contains { $0.0.lowercased() == "if-none-match" && $0.1 == "\"v1\"" })
        let after = try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")]!
        #expect(after.files == before.files && after.contentSHA256 == before.contentSHA256)
        #expect(after.fetchedAt > before.fetchedAt, "304 refreshes the timestamps")
        #expect(try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName) == filesBefore)
        let modifiedAfter = try FileManager.default.attributesOfItem(atPath: cache.appendingPathComponent(after.filename).path)[.modificationDate] as! Date
        #expect(modifiedAfter == modified, "no file was rewritten")
    }

    @Test func changedContentBehindTheSameURLReplacesTheFiles() async throws {
        let (server, directory, export) = try setUp("changed", routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        var configuration = Fixtures.configuration(exports: [export], cache: cache)
        configuration.ttl = 0
        _ = try await warm(configuration)
        let old = try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")]!
        server.setRoute("/a.jpg", .ok(bytes: try Fixtures.photo("hubble.jpg")))

        let report = try await warm(configuration)

        #expect(report.downloaded == 1 && report.decoded == 1)
        let new = try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")]!
        #expect(new.contentSHA256 != old.contentSHA256)
        let names = Set(try Fixtures.fileNames(in: cache))
        #expect(new.files.values.allSatisfy { names.contains($0.filename) })
        #expect(old.files.values.allSatisfy { !names.contains($0.filename) }, "the old files are gone")
    }

    @Test func aUserWhoseURLChangedGetsTheNewPhoto() async throws {
        let server = try FixtureServer(routes: ["/old.jpg": .ok(bytes: try Fixtures.photo("retina.jpg")), "/new.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg"))])
        let directory = try Fixtures.temporaryDirectory("moved")
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let first = try Fixtures.writeUsersExport([(id: "u", name: "U", url: server.url("/old.jpg"))], in: directory, name: "1.json")
        _ = try await warm(Fixtures.configuration(exports: [first], cache: cache))
        let second = try Fixtures.writeUsersExport([(id: "u", name: "U", url: server.url("/new.jpg"))], in: directory, name: "2.json")

        _ = try await warm(Fixtures.configuration(exports: [second], cache: cache))

        let metadata = try Fixtures.loadMetadata(cache)
        #expect(metadata.profiles["u"]?.photoSource == server.url("/new.jpg"))
        #expect(metadata.profiles["u"]?.cachedImagePath["900"] == metadata.entries[server.url("/new.jpg")]?.files["900"]?.filename)
        #expect(!metadata.profiles.values.contains { $0.photoSource == server.url("/old.jpg") }, "no user references the old entry")
    }

    @Test func aFailedRefreshKeepsTheCachedPhoto() async throws {
        let (server, directory, export) = try setUp("keep", routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        var configuration = Fixtures.configuration(exports: [export], cache: cache)
        configuration.ttl = 0
        configuration.fetchLimits.retries = 0
        _ = try await warm(configuration)
        let before = try Fixtures.loadMetadata(cache).entries[server.url("/a.jpg")]!
        server.setRoute("/a.jpg", .status(500))

        let report = try await warm(configuration)

        #expect(report.failed == 1 && report.failures.first?.keptCachedPhoto == true)
        let metadata = try Fixtures.loadMetadata(cache)
        #expect(metadata.entries[server.url("/a.jpg")]?.files == before.files)
        #expect(metadata.profiles["/a.jpg"]?.kind == .photo)
        #expect(before.files.values.allSatisfy { FileManager.default.fileExists(atPath: cache.appendingPathComponent($0.filename).path) })
    }

    @Test func retriesHonourRetryAfterAndStopAtTheLimit() async throws {
        let photo = try Fixtures.photo("astronaut.jpg")
        let (server, directory, export) = try setUp("retry", routes: [
            "/busy.jpg": .sequence([.ok(bytes: [], headers: []), .ok(bytes: photo)]),
            "/flaky.jpg": .sequence([.status(503), .status(503), .ok(bytes: photo)]),
            "/down.jpg": .status(503),
        ])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        server.setRoute("/busy.jpg", .sequence([.status(429), .ok(bytes: photo)]))
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.fetchLimits.retries = 2
        configuration.fetchLimits.retryBackoff = 0.05

        let report = try await warm(configuration)

        func count(_ path: String) -> Int { server.requests.filter { $0.path == path }.count }
        #expect(count("/busy.jpg") == 2 && count("/flaky.jpg") == 3, "429 and 503 are retried")
        #expect(count("/down.jpg") == 3, "at most 1 + 2 retries")
        #expect(report.downloaded == 2 && report.failuresByClass == ["httpStatus": 1])
    }

    @Test func aRetryAfterLongerThanTheBudgetEndsTheRetries() async throws {
        let server = try FixtureServer(routes: [:])
        defer { server.shutdown() }
        server.setRoute("/later.jpg", .ok(bytes: []))
        let directory = try Fixtures.temporaryDirectory("retry-after")
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try Fixtures.photo("astronaut.jpg")
        // 503 asking for 1 s: honoured (the second request comes ≥ 1 s later).
        server.setRoute("/later.jpg", .sequence([.statusWithHeaders(503, [("Retry-After", "1")]), .ok(bytes: photo)]))
        // Another host's 503 asking for an hour: over the budget (--max-host-wait), no retry.
        let other = try FixtureServer(routes: ["/never.jpg": .statusWithHeaders(503, [("Retry-After", "3600")])])
        defer { other.shutdown() }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/later.jpg")), (id: "2", name: "B", url: other.url("/never.jpg"))], in: directory)
        let started = Date()

        let report = try await warm(Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache")))

        #expect(report.downloaded == 1)
        #expect(Date().timeIntervalSince(started) >= 1)
        #expect(other.requests.filter { $0.path == "/never.jpg" }.count == 1)
    }

    @Test func theServersMaxAgeDecidesFreshnessCappedByTheMaximum() async throws {
        let (server, directory, export) = try setUp("max-age", routes: [
            "/short.jpg": .conditional(bytes: try Fixtures.photo("astronaut.jpg"), etag: "\"s\"", headers: [("Cache-Control", "max-age=1")]),
            "/long.jpg": .conditional(bytes: try Fixtures.photo("coffee.jpg"), etag: "\"l\"", headers: [("Cache-Control", "public, max-age=31536000")]),
        ])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        let configuration = Fixtures.configuration(exports: [export], cache: cache)   // TTL 7 days, max 30 days
        _ = try await warm(configuration)
        let metadata = try Fixtures.loadMetadata(cache)
        let short = try #require(metadata.entries[server.url("/short.jpg")])
        let long = try #require(metadata.entries[server.url("/long.jpg")])
        #expect(abs(short.freshUntil!.timeIntervalSince(short.fetchedAt) - 1) < 0.01)
        #expect(abs(long.freshUntil!.timeIntervalSince(long.fetchedAt) - 30 * 24 * 3600) < 0.01, "a year capped at 30 days")
        try await Task.sleep(for: .milliseconds(1200))

        let report = try await warm(configuration)

        #expect(report.notModified == 1 && report.fresh == 1, "only the 1-second one is asked again")
        #expect(server.requests.filter { $0.path == "/long.jpg" }.count == 1)
    }

    @Test func aSourceThatFailedForGoodIsNotAskedAgainSoon() async throws {
        let (server, directory, export) = try setUp("failure-ttl", routes: ["/gone.jpg": .status(404)])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        let report = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        #expect(server.requests.count == 1)
        #expect(report.skippedRecentlyFailed == 1 && report.failed == 0)
        #expect(try Fixtures.loadMetadata(cache).profiles["/gone.jpg"]?.kind == .monogram)
    }
}

extension IncrementalRunTests {
    @Test func aRefusalByPolicyIsDecidedAgainUnderTheNextRunsPolicy() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("policy-change")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/a.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        // Loopback refused (the default policy): decided here, no request made.
        let refused = try Binary.run(["warm", export, "--cache", cache])
        #expect(refused.status == 0 && refused.stdout.contains("1 failed"), "\(refused.stdout)\n\(refused.stderr)")
        #expect(server.requests.isEmpty, "the refusal is decided before any connection")
        HostileLedger.record("network", "a refusal by policy, then the policy changed", tried: "a loopback URL refused, then --allow-private-networks", count: 1,
                             outcome: "not remembered: fetched on the next run")
        // The advice followed: the next run fetches it at once, not "failed recently".
        let allowed = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--log-level", "debug"])
        #expect(allowed.status == 0 && allowed.stdout.contains(" 1 downloaded"), "\(allowed.stdout)\n\(allowed.stderr)")
        #expect(!allowed.stderr.contains("not asked again"), "\(allowed.stderr)")
        #expect(server.requests.count == 1)
    }

    @Test func failureTTLHoursZeroAsksAgainAtOnce() throws {
        let server = try FixtureServer(routes: ["/gone.jpg": .status(404)])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("failure-ttl")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/gone.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        _ = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks"])
        #expect(server.requests.count == 1)
        _ = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks"])
        #expect(server.requests.count == 1, "a 404 is not asked again within the default 24 h")
        _ = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--failure-ttl-hours", "0"])
        #expect(server.requests.count == 2, "--failure-ttl-hours 0 counts for failures remembered before")
    }

    @Test func aFirstRunKilledMidwayKeepsWhatItFinished() async throws {
        // Six photos answered at once, one that takes a minute: the run is killed while it waits.
        var routes: [String: FixtureServer.Reply] = ["/slow.jpg": .delayed(seconds: 60, bytes: try Fixtures.photo("coffee.jpg"))]
        let names = ["astronaut.jpg", "chelsea.jpg", "coffee.jpg", "rocket.jpg", "hubble.jpg", "retina.jpg"]
        for name in names { routes["/\(name)"] = .ok(bytes: try Fixtures.photo(name)) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("killed-first-run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = names.enumerated().map { (id: "u\($0.offset)", name: "User \($0.offset)", url: Optional(server.url("/\($0.element)"))) }
            + [(id: "slow", name: "Slow Poke", url: Optional(server.url("/slow.jpg")))]
        let export = try Fixtures.writeUsersExport(users, in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let process = try Binary.startQuietly(["warm", export, "--cache", cache, "--allow-private-networks",
                                                "--timeout", "120", "--source-deadline", "120"])
        // Until the six are in, then past the commit interval.
        let deadline = Date().addingTimeInterval(30)
        while server.requests.count < 7, Date() < deadline { try await Task.sleep(nanoseconds: 100_000_000) }
        try await Task.sleep(nanoseconds: UInt64((WarmPipeline.commitInterval + 2.5) * 1e9))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "killed, not finished")
        let before = server.requests.count
        let again = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--timeout", "1"])
        let asked = server.requests.dropFirst(before).map(\.path)
        #expect(Set(asked).isSubset(of: ["/slow.jpg"]), "only the unfinished source is asked for again: \(asked)")
        #expect(again.stdout.contains("6 fresh"), "the six committed before the kill are fresh: \(again.stdout)")
        HostileLedger.record("disk", "a first run killed mid-way", tried: "SIGKILL while one source of seven still downloads", count: 1,
                             outcome: "the six finished were committed (every 2 s at least): the next run asked only for the seventh")
    }
}
