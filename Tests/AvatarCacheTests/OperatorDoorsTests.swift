import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import AvatarCache
@testable import AvatarCacheConfiguration
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheImaging
@testable import AvatarCachePipeline
@testable import AvatarCacheReporting
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
@testable import AvatarCacheSupport

/// What operators met (issue "the doors still ajar"): a refusal by policy remembered past
/// a change of policy, JSON logs with plain-text fatal errors, pipeline paths taken from
/// the working directory, a glob matching nothing called a usage error, prune's --wait
/// explained in merge's words, a killed first run keeping nothing, a byte limit that let a
/// body keep arriving.
@Suite(.serialized) struct OperatorDoorsTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CLITests.Result {
        try CLITests.run(arguments, environment: environment)
    }

    @Test func aRefusalByPolicyIsDecidedAgainUnderTheNextRunsPolicy() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("policy-change")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/a.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        // Loopback refused (the default policy): decided here, no request made.
        let refused = try run(["warm", export, "--cache", cache])
        #expect(refused.status == 0 && refused.stdout.contains("1 failed"), "\(refused.stdout)\n\(refused.stderr)")
        #expect(server.requests.isEmpty, "the refusal is decided before any connection")
        HostileLedger.record("network", "a refusal by policy, then the policy changed", tried: "a loopback URL refused, then --allow-private-networks", count: 1,
                             outcome: "not remembered: fetched on the next run")
        // The advice followed: the next run fetches it at once, not "failed recently".
        let allowed = try run(["warm", export, "--cache", cache, "--allow-private-networks", "--log-level", "debug"])
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
        _ = try run(["warm", export, "--cache", cache, "--allow-private-networks"])
        #expect(server.requests.count == 1)
        _ = try run(["warm", export, "--cache", cache, "--allow-private-networks"])
        #expect(server.requests.count == 1, "a 404 is not asked again within the default 24 h")
        _ = try run(["warm", export, "--cache", cache, "--allow-private-networks", "--failure-ttl-hours", "0"])
        #expect(server.requests.count == 2, "--failure-ttl-hours 0 counts for failures remembered before")
    }

    @Test func fatalErrorsAreJSONLinesWhenTheLogIs() throws {
        let directory = try Fixtures.temporaryDirectory("json-fatal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        // The lock held by another run: exit 75.
        let held = try CacheLock.acquire(in: CacheDirectory(root: cache))
        let locked = try run(["warm", export, "--cache", cache.path, "--log-format", "json"])
        held.release()
        // A metrics file in a folder that does not exist: exit 64, before the run.
        let badMetrics = try run(["warm", export, "--cache", cache.path, "--log-format", "json", "--metrics-file", directory.appendingPathComponent("no/such.prom").path])
        // The pipeline file's own log-format counts too.
        let pipeline = directory.appendingPathComponent("p.yml")
        try Data("cache: \(cache.path)\ninputs: [\(directory.path)/missing.json]\nlog-format: json\n".utf8).write(to: pipeline)
        let missing = try run(["run", pipeline.path])
        for (result, code) in [(locked, 75), (badMetrics, 64), (missing, 65)] {
            #expect(result.status == Int32(code), "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["time"] as? String != nil && object?["message"] as? String != nil, "a JSON line: \(line)")
            }
            let last = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
            #expect(last?["level"] as? String == "error" && last?["exitCode"] as? Int == code, "\(lines.last!)")
        }
    }

    @Test func relativePathsInAPipelineFileAreTakenFromItsFolder() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("relative-paths")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("exports"), withIntermediateDirectories: true)
        _ = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/a.jpg"))], in: folder.appendingPathComponent("exports"))
        try Data("""
            cache: cache
            inputs: [exports/*.json]
            report: reports/../report.json
            allow-private-networks: true
            """.utf8).write(to: folder.appendingPathComponent("p.yml"))
        // Run from elsewhere (cron starts in a home directory).
        let elsewhere = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let result = try CLITests.run(["-c", "cd \(elsewhere.path) && \(CLITests.binary.path) run ../etc/p.yml"], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("cache/index.sqlite").path), "the cache beside the file")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("report.json").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing where the command ran")
    }

    @Test func aGlobMatchingNothingIsAMissingExport() throws {
        let directory = try Fixtures.temporaryDirectory("empty-glob")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try run(["warm", directory.appendingPathComponent("exports-*.json").path, "--cache", directory.appendingPathComponent("c").path])
        #expect(result.status == 65 && result.stderr.contains("matches no file"), "\(result.status) \(result.stderr)")
        let missing = try run(["warm", directory.appendingPathComponent("exports.json").path, "--cache", directory.appendingPathComponent("c").path])
        #expect(missing.status == 65, "the same code as a missing file")
    }

    @Test func pruneAndMergeEachExplainTheirOwnWait() throws {
        let prune = try run(["prune", "--help"]).stdout
        let merge = try run(["merge", "--help"]).stdout
        let pruneWait = prune.components(separatedBy: "--wait").dropFirst().joined()
        #expect(!pruneWait.isEmpty && !pruneWait.contains("merge") && !pruneWait.contains("each"), "\(prune)")
        #expect(merge.contains("each merged cache"), "\(merge)")
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
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["warm", export, "--cache", cache, "--allow-private-networks", "--timeout", "120", "--source-deadline", "120"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until the six are in, then past the commit interval.
        let deadline = Date().addingTimeInterval(30)
        while server.requests.count < 7, Date() < deadline { try await Task.sleep(nanoseconds: 100_000_000) }
        try await Task.sleep(nanoseconds: UInt64((WarmPipeline.commitInterval + 2.5) * 1e9))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "killed, not finished")
        let before = server.requests.count
        let again = try run(["warm", export, "--cache", cache, "--allow-private-networks", "--timeout", "1"])
        let asked = server.requests.dropFirst(before).map(\.path)
        #expect(Set(asked).isSubset(of: ["/slow.jpg"]), "only the unfinished source is asked for again: \(asked)")
        #expect(again.stdout.contains("6 fresh"), "the six committed before the kill are fresh: \(again.stdout)")
        HostileLedger.record("disk", "a first run killed mid-way", tried: "SIGKILL while one source of seven still downloads", count: 1,
                             outcome: "the six finished were committed (every 2 s at least): the next run asked only for the seventh")
    }

    @Test func aFetchTellsItsBodysContentLengthWhereTheServerDeclaresOne() async throws {
        // What the downloads' backlog counts a body by while it downloads.
        let photo = try Fixtures.photo("chelsea.jpg")
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: photo), "/chunked.jpg": .streamed(total: 300_000)])
        defer { server.shutdown() }
        var limits = FetchLimits()
        limits.retries = 0
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: limits, maxConnectionsPerHost: 2)
        // The sizes each fetch was told (`HTTPFetcher.fetch(sized:)`).
        let declared = NIOLockedValueBox<[Int]>([]), chunked = NIOLockedValueBox<[Int]>([])
        let result = try await fetcher.fetch(server.url("/a.jpg"), sized: { size in declared.withLockedValue { $0.append(size) } })
        _ = try? await fetcher.fetch(server.url("/chunked.jpg"), sized: { size in chunked.withLockedValue { $0.append(size) } })
        await fetcher.shutdown()
        guard case .fetched(let fetched) = result else { Issue.record("not fetched: \(result)"); return }
        #expect(fetched.bytes == photo && declared.withLockedValue { $0 } == [photo.count])
        let told = chunked.withLockedValue { $0 }
        #expect(told.isEmpty, "no Content-Length, nothing told: \(told)")
    }

    @Test func theByteLimitStopsTheBodyWhereItIsReached() async throws {
        let server = try FixtureServer(routes: ["/huge.jpg": .streamed(total: 96 * 1024 * 1024)])
        defer { server.shutdown() }
        var limits = FetchLimits()
        limits.maxBytes = 20_000_000
        limits.retries = 0
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: limits, maxConnectionsPerHost: 2)
        do {
            _ = try await fetcher.fetch(server.url("/huge.jpg"))
            Issue.record("a 96 MB body passed a 2 MB limit")
        } catch let failure as SourceFailure {
            #expect(failure.failureClass == .tooLarge, "\(failure)")
        }
        await fetcher.shutdown()
        try await Task.sleep(nanoseconds: 1_000_000_000)
        // What reached the socket: the limit, and what the kernel's socket buffers took
        // before the connection closed (3 MB here on loopback); never the rest of the body
        // (the client does not read it to keep the connection: it closes it).
        let sent = server.streamedBytes
        #expect(sent < limits.maxBytes + 8_000_000, "\(sent) bytes sent for a 20 MB limit")
        HostileLedger.record("network", "a chunked body far over the byte limit", tried: "96 MB streamed with backpressure, the default 20 MB limit", count: 1,
                             outcome: "tooLarge; the connection closed at the limit (\(sent / 1_000_000) MB reached the socket, kernel buffers included)")
    }

    /// A resolver that answers each question with the next address of a list, and counts
    /// the questions: the DNS server of a rebinding attack, on loopback addresses only.
    final class RebindingResolver: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [String]
        private(set) var asked = 0
        init(_ answers: [String]) { self.answers = answers }
        func resolve(_ host: String) -> [NetworkPolicy.Address] {
            lock.withLock {
                asked += 1
                return [NetworkPolicy.Address(literal: answers.count > 1 ? answers.removeFirst() : answers[0])!]
            }
        }
    }

    @Test func eachHopConnectsToTheAddressItsCheckPassed() async throws {
        // Two servers on one port of two loopback addresses; nothing on 127.0.0.1 at that
        // port, where the system's own resolution of "localhost" would connect.
        let first = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))], host: "127.0.0.2")
        defer { first.shutdown() }
        let second = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("coffee.jpg"))], host: "127.0.0.3", port: first.port)
        defer { second.shutdown() }
        let resolver = RebindingResolver(["127.0.0.2", "127.0.0.3"])
        let policy = NetworkPolicy(allowPrivateNetworks: true) { host in resolver.resolve(host) }
        var limits = FetchLimits()
        limits.retries = 0
        let fetcher = HTTPFetcher(policy: policy, limits: limits, maxConnectionsPerHost: 2)
        let url = "http://localhost:\(first.port)/a.jpg"
        var bodies: [String] = []
        for _ in 0..<2 {
            if case .fetched(let photo) = try await fetcher.fetch(url) { bodies.append(photo.sha256) }
        }
        await fetcher.shutdown()
        #expect(resolver.asked == 2, "each fetch checks the name once, and nothing resolves it again")
        #expect(first.requests.count == 1 && second.requests.count == 1, "each went where its check said")
        #expect(bodies == [SHA256Hex.of(try Fixtures.photo("chelsea.jpg")), SHA256Hex.of(try Fixtures.photo("coffee.jpg"))])
        #expect(first.requests.first?.headers.contains { $0.0.lowercased() == "host" && $0.1.hasPrefix("localhost") } == true,
                "the request still names its host")
        HostileLedger.record("network", "DNS rebinding", tried: "a resolver answering one loopback address, then another, then the unspecified address", count: 3,
                             outcome: "each hop connected to the address its check passed (never a second resolution); the unspecified address refused at its check")
    }

    @Test func aHostThatRebindsToABlockedAddressIsRefusedAtItsCheck() async throws {
        // The first answer passes, the second is the unspecified address (refused whatever
        // --allow-private-networks says): the second fetch is refused at its check, before
        // any connection. Were the check wrong, no packet could leave this machine: Linux
        // connects a socket addressed to 0.0.0.0 to the local host. The failure's class
        // says which happened: `blocked` is the check's, a failed connection is `network`.
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))], host: "127.0.0.2")
        defer { server.shutdown() }
        let resolver = RebindingResolver(["127.0.0.2", "0.0.0.0"])
        let policy = NetworkPolicy(allowPrivateNetworks: true) { host in resolver.resolve(host) }
        let fetcher = HTTPFetcher(policy: policy, limits: FetchLimits(), maxConnectionsPerHost: 2)
        let url = "http://rebinding.invalid:\(server.port)/a.jpg"
        _ = try await fetcher.fetch(url)
        let refusal = await #expect(throws: SourceFailure.self) { _ = try await fetcher.fetch(url) }
        #expect(refusal?.failureClass == .blocked, "refused at the check: \(String(describing: refusal))")
        await fetcher.shutdown()
        #expect(server.requests.count == 1 && resolver.asked == 2)
    }

    @Test func anAddressThatRefusesPassesToTheNextCheckedOne() async throws {
        // As the client's own resolution would: the host's first address takes no connection
        // (nothing listens on 127.0.0.9), its second does.
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))], host: "127.0.0.2")
        defer { server.shutdown() }
        let policy = NetworkPolicy(allowPrivateNetworks: true) { _ in
            [NetworkPolicy.Address(literal: "127.0.0.9")!, NetworkPolicy.Address(literal: "127.0.0.2")!]
        }
        var limits = FetchLimits()
        limits.retries = 0
        let fetcher = HTTPFetcher(policy: policy, limits: limits, maxConnectionsPerHost: 2)
        let result = try await fetcher.fetch("http://localhost:\(server.port)/a.jpg")
        await fetcher.shutdown()
        guard case .fetched(let photo) = result else { Issue.record("not fetched: \(result)"); return }
        #expect(photo.bytes == (try Fixtures.photo("chelsea.jpg")) && server.requests.count == 1)
    }
}
