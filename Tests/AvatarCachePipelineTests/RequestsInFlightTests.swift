import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheFetching
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Downloads and renders in stages of their own: requests in flight sized for the network,
/// each host its own share of them, the bodies waiting for a decode bounded by memory.
/// Every server is a real one on 127.0.0.1; the timings are generous ratios, for a busy
/// 2-core machine.
@Suite(.serialized) struct RequestsInFlightTests {
    /// A run over `urls`, one profile each, with the test's settings.
    func warm(_ urls: [String], label: String, configure: (inout WarmConfiguration) -> Void) async throws -> (RunReport, URL) {
        let directory = try Fixtures.temporaryDirectory(label)
        let export = try Fixtures.writeUsersExport(urls.enumerated().map { (id: "u\($0.offset)", name: "U", url: Optional($0.element)) }, in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.fetchLimits.retries = 0
        configure(&configuration)
        return (try await WarmPipeline(configuration: configuration, logger: .test).run(), directory)
    }

    @Test func requestsInFlightOutnumberTheSourcesRenderedAtOnce() async throws {
        // 96 photos, each answered after 1 s: 16 at a time (the sources rendered at once)
        // would take 6 s; 48 requests in flight (the server's host allows 48 connections)
        // take two round trips.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<96 { routes["/slow\(index).jpg"] = .delayed(seconds: 1, bytes: photo) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let started = Date()
        let (report, directory) = try await warm((0..<96).map { server.url("/slow\($0).jpg") }, label: "in-flight") {
            $0.concurrency = 16
            $0.maxConnectionsPerHost = 48
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let elapsed = Date().timeIntervalSince(started)
        #expect(report.downloaded == 96 && report.failed == 0, "\(report.failuresByClass)")
        #expect(report.peakRequestsInFlight > 16 && report.peakRequestsInFlight <= 48, "\(report.peakRequestsInFlight)")
        #expect(elapsed < 4.5, "96 answers a second late in \(elapsed) s: more than 16 at a time (6 s)")
    }

    @Test func aSlowHostDoesNotStallAFastOne() async throws {
        // 16 photos from a host answering after 1.5 s, read first, then 40 from one that
        // answers at once; 8 requests in flight, 4 connections a host. The slow host holds
        // its 4, never all 8: the fast host's photos are all asked for before the slow
        // host's first answer.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        var slowRoutes: [String: FixtureServer.Reply] = [:], fastRoutes: [String: FixtureServer.Reply] = [:]
        for index in 0..<16 { slowRoutes["/s\(index).jpg"] = .delayed(seconds: 1.5, bytes: photo) }
        for index in 0..<40 { fastRoutes["/f\(index).jpg"] = .ok(bytes: photo) }
        let slow = try FixtureServer(routes: slowRoutes), fast = try FixtureServer(routes: fastRoutes)
        defer { slow.shutdown(); fast.shutdown() }
        let urls = (0..<16).map { slow.url("/s\($0).jpg") } + (0..<40).map { fast.url("/f\($0).jpg") }
        let (report, directory) = try await warm(urls, label: "slow-host") {
            $0.requestsInFlight = 8
            $0.maxConnectionsPerHost = 4
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.downloaded == 56 && report.failed == 0, "\(report.failuresByClass)")
        let firstSlow = try #require(slow.requests.map(\.at).min())
        let fastAsked = fast.requests.map { $0.at.timeIntervalSince(firstSlow) }
        #expect(fastAsked.count == 40 && fastAsked.allSatisfy { $0 < 1.2 },
                "every fast photo asked for before the slow host's first answer (1.5 s): \(fastAsked.max() ?? -1) s")
        let slowStarts = slow.requests.map { $0.at.timeIntervalSince(firstSlow) }
        #expect(slowStarts.filter { $0 < 1.2 }.count <= 4, "the slow host had 4 requests at a time: \(slowStarts.sorted())")
    }

    @Test func aRetryAfterWaitHoldsNoSlot() async throws {
        // One slot in all. The first request is answered 429 Retry-After: 2; while its host
        // waits, its slot goes to the next request, for another host, answered at once.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        let server = try FixtureServer(routes: [
            "/busy.jpg": .sequence([.statusWithHeaders(429, [("Retry-After", "2")]), .ok(bytes: photo)]),
        ])
        defer { server.shutdown() }
        let otherServer = try FixtureServer(routes: ["/other.jpg": .ok(bytes: photo)])
        defer { otherServer.shutdown() }
        var limits = FetchLimits()
        limits.retries = 2
        limits.maxRetryWait = 10
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: limits, maxConnectionsPerHost: 4)
        let limiter = RequestLimiter(total: 1, perHost: 1, perHTTP1Host: 1)
        let busy = RequestSlot(limiter, for: server.url("/busy.jpg"))
        await busy.acquire()
        let started = Date()
        async let first = fetcher.fetch(server.url("/busy.jpg"), slot: busy)
        let other = RequestSlot(limiter, for: otherServer.url("/other.jpg"))
        await other.acquire()
        let slotAfter = Date().timeIntervalSince(started)
        let second = try await fetcher.fetch(otherServer.url("/other.jpg"), slot: other)
        other.release()
        let firstResult = try await first
        busy.release()
        await fetcher.shutdown()
        #expect(slotAfter < 1.5, "the slot came during the 2 s Retry-After wait, after \(slotAfter) s")
        guard case .fetched = firstResult, case .fetched = second else { Issue.record("\(firstResult), \(second)"); return }
        #expect(server.requests.map(\.path) == ["/busy.jpg", "/busy.jpg"] && otherServer.requests.map(\.path) == ["/other.jpg"])
        #expect(otherServer.requests[0].at < server.requests[1].at && server.requests[1].at.timeIntervalSince(server.requests[0].at) >= 1.9)
        #expect(limiter.requestsInFlight == 0)
    }

    @Test func bodiesWaitingForTheirDecodeStayWithinTheDownloadMemory() async throws {
        // 48 photos of 54 to 244 KB downloaded at loopback speed, 256 requests allowed in
        // flight, one decode thread: downloads outrun the decodes, and the bodies waiting
        // for them are held within --max-download-memory (1 MB; give or take the bodies
        // admitted before their size was known: 1.16 to 1.30 MB in five runs), not the
        // 7 MB of all of them.
        let names = ["hubble.jpg", "retina.jpg", "chelsea-disc.png", "logo.png", "camera.png", "coins.gif", "coffee.jpg", "astronaut.jpg"]
        let photos = try names.map { try Fixtures.photo($0) }
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<48 { routes["/p\(index)"] = .ok(bytes: photos[index % photos.count]) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let budget = 1_000_000
        let (report, directory) = try await warm((0..<48).map { server.url("/p\($0)") }, label: "download-memory") {
            $0.maxDownloadMemory = Int64(budget)
            $0.maxConnectionsPerHost = 64
            $0.decodeThreads = 1
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(report.downloaded == 48 && report.failed == 0, "\(report.failuresByClass)")
        let largest = photos.map(\.count).max()!
        let all = 6 * photos.map(\.count).reduce(0, +)
        #expect(report.peakBytesWaitingForDecode > 0)
        #expect(report.peakBytesWaitingForDecode <= budget + 3 * largest,
                "\(report.peakBytesWaitingForDecode) bytes waited at once, of \(all) in all")
    }
}
