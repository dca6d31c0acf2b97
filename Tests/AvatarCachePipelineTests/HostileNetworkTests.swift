import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Hostile photo URLs and servers, each through a whole run against a real server
/// (hostile photo bytes: AvatarCacheImagingTests' HostileImageTests).
@Suite struct HostileNetworkTests {
    func warm(_ configuration: WarmConfiguration) async throws -> RunReport {
        try await WarmPipeline(configuration: configuration, logger: .test).run()
    }

    func run(_ urls: [String], server: FixtureServer?, label: String, configure: (inout WarmConfiguration) -> Void = { _ in }) async throws -> (RunReport, URL) {
        let directory = try Fixtures.temporaryDirectory(label)
        let export = try Fixtures.writeUsersExport(urls.enumerated().map { (id: "u\($0.offset)", name: "U", url: Optional($0.element)) }, in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.allowPrivateNetworks = false
        configuration.fetchLimits.retries = 0
        if let server { configuration.allowedHosts = ["127.0.0.1:\(server.port)"] }
        configure(&configuration)
        return (try await warm(configuration), directory)
    }

    @Test func onlyHTTPAndHTTPSAreFetched() async throws {
        let server = try FixtureServer(routes: [:])
        defer { server.shutdown() }
        let urls = ["file:///etc/passwd", "ftp://example.com/a.jpg", "gopher://example.com/", "javascript:alert(1)",
                    "data:image/png;base64,iVBORw0KGgo=", "dict://127.0.0.1:11211/stat", "ldap://example.com/", "jar:http://x/!/a",
                    "//\(server.baseURL.dropFirst(7))/a.jpg", "http://", "not a url at all", String(repeating: "a", count: 100_000)]
        let (report, directory) = try await run(urls, server: server, label: "schemes")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.failed == urls.count)
        #expect(Set(report.failures.map(\.failureClass)).isSubset(of: [.blocked, .invalidURL]))
        #expect(server.requests.isEmpty, "no request for any of them")
        HostileLedger.record("network", "schemes", tried: "file:, ftp:, gopher:, javascript:, data: (where not allowed), dict:, ldap:, jar:, scheme-relative, empty host, garbage, a 100 KB URL", count: urls.count, outcome: "blocked or invalidURL, no request made")
    }

    @Test func privateAddressesAreRefusedAfterResolution() async throws {
        let urls = ["http://127.0.0.1/a.jpg", "http://localhost/a.jpg", "http://10.1.2.3/a.jpg", "http://172.16.0.1/a.jpg",
                    "http://192.168.1.1/a.jpg", "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/a.jpg",
                    "http://0.0.0.0/a.jpg", "http://224.0.0.1/a.jpg", "http://[::1]/a.jpg", "http://[::ffff:127.0.0.1]/a.jpg",
                    "http://[::ffff:a9fe:a9fe]/a.jpg", "http://[fe80::1]/a.jpg", "http://[fd00::1]/a.jpg", "http://2130706433/a.jpg",
                    "http://0x7f.1/a.jpg", "http://127.1/a.jpg"]
        let (report, directory) = try await run(urls, server: nil, label: "private")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.failed == urls.count)
        for failure in report.failures {
            #expect(failure.failureClass == .blocked || failure.failureClass == .invalidURL, "\(failure.url): \(failure.failureClass) \(failure.reason)")
        }
        HostileLedger.record("network", "private addresses", tried: "loopback, RFC 1918, link-local incl. 169.254.169.254, CGNAT, unspecified, multicast, IPv6 loopback, unique-local, link-local, IPv4-mapped, decimal and hex IPv4 forms", count: urls.count, outcome: "blocked after resolution, no connection")
    }

    @Test func redirectTargetsAreCheckedToo() async throws {
        let photo = try Fixtures.photo("astronaut.jpg")
        let server = try FixtureServer(routes: ["/ok.jpg": .ok(bytes: photo)])
        defer { server.shutdown() }
        let targets = ["http://169.254.169.254/latest/meta-data/iam", "http://localhost:\(server.port)/ok.jpg", "http://10.0.0.1/a.jpg",
                       "file:///etc/passwd", "http://[::1]:\(server.port)/ok.jpg"]
        for (index, target) in targets.enumerated() { server.setRoute("/r\(index)", .redirect(target)) }
        var chain: [String] = []
        for index in 0..<8 { server.setRoute("/c\(index)", .redirect("/c\(index + 1)")); chain.append("/c\(index)") }
        server.setRoute("/c8", .ok(bytes: photo))
        let urls = targets.indices.map { server.url("/r\($0)") } + [server.url("/c0"), server.url("/ok.jpg")]
        let (report, directory) = try await run(urls, server: server, label: "redirects")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.downloaded == 1, "only the direct, allowed URL")
        let classes = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.url, $0.failureClass) })
        for index in targets.indices { #expect(classes[server.url("/r\(index)")] == .blocked, "redirect to \(targets[index])") }
        #expect(classes[server.url("/c0")] == .httpStatus, "8 redirects > 5")
        #expect(server.requests.filter { $0.path.hasPrefix("/c") }.count == 6)
        #expect(server.requests.filter { $0.path == "/ok.jpg" }.count == 1, "no redirect reached the photo through a refused host")
        HostileLedger.record("network", "redirects", tried: "redirects to the metadata address, to loopback under another name, to RFC 1918, to file:, to [::1]; a chain of 8", count: targets.count + 1, outcome: "each target refused (blocked); the chain stopped after 5 redirects (httpStatus)")
    }

    @Test func credentialsInURLsAreNeverSentLoggedOrStored() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("astronaut.jpg"))])
        defer { server.shutdown() }
        let secret = "p4ss-\(UUID().uuidString)"
        let urls = ["http://admin:\(secret)@127.0.0.1:\(server.port)/a.jpg", "http://\(secret)@127.0.0.1:\(server.port)/missing.jpg"]
        let (report, directory) = try await run(urls, server: server, label: "userinfo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let metadata = try String(contentsOf: directory.appendingPathComponent("cache/metadata.json"), encoding: .utf8)
        let reportText = String(decoding: try report.jsonData(), as: UTF8.self)
        var leaked = 0
        if metadata.contains(secret) { leaked += 1 }
        if reportText.contains(secret) { leaked += 1 }
        if server.requests.contains(where: { $0.headers.contains { $0.0.lowercased() == "authorization" } }) { leaked += 1 }
        #expect(leaked == 0)
        #expect(report.downloaded == 1)
        HostileLedger.record("network", "credentials", tried: "user:password@ and user@ in photo URLs", count: urls.count, outcome: "user-info removed before fetching; absent from requests, metadata, report and logs", secretsLeaked: leaked)
    }

    @Test func byteLimitsHoldWhateverTheHeadersSay() async throws {
        let jpeg = try Fixtures.photo("retina.jpg")
        let server = try FixtureServer(routes: [
            "/declared.jpg": .ok(bytes: jpeg + [UInt8](repeating: 0, count: 2_000_000)),
            "/unsized.jpg": .unsized(prefix: jpeg, total: 50_000_000),
            "/small.jpg": .ok(bytes: jpeg),
        ])
        defer { server.shutdown() }
        let (report, directory) = try await run(["/declared.jpg", "/unsized.jpg", "/small.jpg"].map { server.url($0) }, server: server, label: "bytes") {
            $0.fetchLimits.maxBytes = 1_000_000
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let classes = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.url, $0.failureClass) })
        #expect(classes[server.url("/declared.jpg")] == .tooLarge)
        #expect(classes[server.url("/unsized.jpg")] == .tooLarge, "50 MB without Content-Length is cut at 1 MB")
        #expect(report.downloaded == 1 && report.bytesDownloaded == Int64(jpeg.count))
        HostileLedger.record("network", "oversized bodies", tried: "Content-Length over the cap; 50 MB chunked with no Content-Length", count: 2, outcome: "tooLarge, stream aborted at the cap")
    }

    @Test func aServerSendingOneByteASecondTimesOut() async throws {
        let jpeg = try Fixtures.photo("retina.jpg")
        let server = try FixtureServer(routes: ["/drip.jpg": .trickle(prefix: Array(jpeg.prefix(100)), interval: 1), "/hang.jpg": .delayed(seconds: 60, bytes: jpeg)])
        defer { server.shutdown() }
        let started = Date()
        let (report, directory) = try await run([server.url("/drip.jpg"), server.url("/hang.jpg")], server: server, label: "slow") {
            $0.fetchLimits.timeout = 2
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let elapsed = Date().timeIntervalSince(started)
        #expect(report.failuresByClass == ["timeout": 2])
        #expect(elapsed < 10, "bounded by the timeout, not by the server (\(elapsed) s)")
        HostileLedger.record("network", "slow servers", tried: "one byte a second forever; no answer for 60 s", count: 2, outcome: "timeout at the 2 s limit, batch finished in \(String(format: "%.1f", elapsed)) s", hangs: elapsed < 10 ? 0 : 1)
    }

    @Test func serversSendingLargeBodiesSlowlyDoNotHoldTheOtherDownloadsBack() async throws {
        // Four servers declare a body of 1 MB and send a byte a second. Counted by their
        // Content-Length they fill --max-download-memory (2 MB here) at once; a second
        // after each started it stops counting, and the eight ordinary downloads behind
        // them go on instead of waiting for their 8 s timeout.
        let jpeg = try Fixtures.photo("retina.jpg"), ordinary = try Fixtures.photo("chelsea.jpg")
        var routes: [String: FixtureServer.Reply] = [:]
        for drip in 0..<4 { routes["/drip\(drip).jpg"] = .trickle(prefix: Array(jpeg.prefix(100)), interval: 1) }
        for fast in 0..<8 { routes["/fast\(fast).jpg"] = .ok(bytes: ordinary) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let started = Date()
        let urls = (0..<4).map { server.url("/drip\($0).jpg") } + (0..<8).map { server.url("/fast\($0).jpg") }
        let (report, directory) = try await run(urls, server: server, label: "drips") {
            $0.fetchLimits.timeout = 8
            $0.maxDownloadMemory = 2_000_000
            $0.concurrency = 16
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.failuresByClass == ["timeout": 4] && report.downloaded == 8, "\(report.failuresByClass), \(report.downloaded)")
        let asked = server.requests.filter { $0.path.hasPrefix("/fast") }.map { $0.at.timeIntervalSince(started) }
        #expect(asked.count == 8 && asked.allSatisfy { $0 < 4 }, "each asked for within 4 s, not after the slow ones' 8 s: \(asked)")
        HostileLedger.record("network", "slow large bodies", tried: "four servers declaring 1 MB and sending a byte a second, ahead of eight ordinary ones, --max-download-memory 2 MB",
                             count: 4, outcome: "the eight asked for within \(String(format: "%.1f", asked.max() ?? 0)) s; the four timed out at 8 s",
                             hangs: asked.allSatisfy { $0 < 4 } ? 0 : 1)
    }

    @Test func aWholeSourceDeadlineBoundsEveryAttemptTogether() async throws {
        // Each attempt would time out at 1 s and be retried up to 10 times: the source
        // deadline (2.2 s) ends it after the second attempt, cut short to what was left.
        let jpeg = try Fixtures.photo("retina.jpg")
        let server = try FixtureServer(routes: ["/drip.jpg": .trickle(prefix: Array(jpeg.prefix(100)), interval: 1)])
        defer { server.shutdown() }
        let (report, directory) = try await run([server.url("/drip.jpg")], server: server, label: "deadline") {
            $0.fetchLimits.timeout = 1
            $0.fetchLimits.retries = 10
            $0.fetchLimits.maxRetryWait = 60
            $0.fetchLimits.sourceDeadline = 2.2
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.failuresByClass == ["timeout": 1])
        #expect(server.requests.count == 2, "two attempts fit in the deadline, not eleven: \(server.requests.count)")
        #expect(report.failures.first?.reason.contains("source deadline of 2.2 s (2 attempts)") == true, "\(report.failures)")
        HostileLedger.record("network", "a slow source retried", tried: "one byte a second, 1 s timeout, 10 retries allowed", count: 1,
                             outcome: "ended by the 2.2 s source deadline after \(server.requests.count) attempts", hangs: server.requests.count <= 2 ? 0 : 1)
    }
}

@Suite struct TLSFailureTests {
    /// An `https://` URL on a plain HTTP port fails the same way every time: one
    /// connection, no retry (it once made 20 handshakes in 28 s for one source).
    @Test func aTLSFailureIsFinalForTheSource() async throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea-96.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "u", name: "Tee Ell", url: "https://127.0.0.1:\(server.port)/a.jpg")], in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.fetchLimits.retries = 3
        configuration.fetchLimits.retryBackoff = 0.3
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        let failure = try #require(report.failures.first)
        #expect(failure.failureClass == .network && failure.reason.contains("TLS"), "\(failure)")
        // Retried, it would have made one connection per attempt (four), and before the fix
        // the client made more inside one attempt (19 seen).
        #expect(server.connections == 1, "one handshake, no retry (\(server.connections) connections)")
    }
}
