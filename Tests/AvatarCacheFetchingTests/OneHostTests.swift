import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import AvatarCacheFetching
import AvatarCacheTestKit

/// One host serving a platform's photos: more than one HTTP/2 connection to it when its
/// streams bind (never to a host that refuses), and its pace after refusals back by the
/// round trip. Servers are real ones on 127.0.0.1 over TLS with an authority made for the run.
@Suite struct OneHostTests {
    /// Fetches `paths` from `server` at once, each with a slot of `limiter`; the results'
    /// words ("ok", or the failure).
    func fetchAll(_ paths: [String], from server: TLSFixtureServer, fetcher: HTTPFetcher, limiter: RequestLimiter) async -> [String] {
        await withTaskGroup(of: String.self) { group in
            for path in paths {
                group.addTask {
                    let slot = RequestSlot(limiter, for: server.url(path))
                    defer { slot.release() }
                    if let failure = await slot.acquire() { return failure.reason }
                    do {
                        guard case .fetched = try await fetcher.fetch(server.url(path), slot: slot) else { return "not fetched" }
                        return "ok"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            var all: [String] = []
            for await result in group { all.append(result) }
            return all
        }
    }

    @Test func aHostsStreamsBindingOpenAnotherConnection() async throws {
        // 24 photos answered after 0.4 s, 24 in flight, 6 streams a connection: one
        // connection would carry them in four round trips; four connections in one.
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try TLSFixtureServer(authority: authority, body: try Fixtures.photo("chelsea-96.jpg"), delay: .milliseconds(400))
        defer { server.shutdown() }
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: FetchLimits(), maxConnectionsPerHost: 4,
                                  streamsPerConnection: 6, caFile: authority.caFile)
        let limiter = RequestLimiter(total: 64, perHost: 24, perHTTP1Host: 4, minimumWindow: 24)
        let started = Date()
        let results = await fetchAll((0..<24).map { "/p\($0).jpg" }, from: server, fetcher: fetcher, limiter: limiter)
        let elapsed = Date().timeIntervalSince(started)
        await fetcher.shutdown()
        #expect(results.allSatisfy { $0 == "ok" }, "\(results.filter { $0 != "ok" })")
        #expect(server.connections == 4, "streams bound at 6 a connection: \(server.connections) connections for 24 at once")
        #expect(elapsed < 1.4, "24 photos of 0.4 s over 4 connections of 6 streams: one round, not four (\(elapsed) s)")
    }

    @Test func aLongLineOpensItsConnectionsAtItsFirstRequests() {
        let spread = ConnectionSpread(streamsPerConnection: 100, maxConnections: 8)
        // 1,000 requests for one host: its first 8 open the 8 connections the line will
        // need, together (each costs its set-up's round trips before its first answer)...
        #expect((0..<8).map { _ in spread.lease("far", mayOpen: true, demand: 1000) } == Array(0..<8))
        // ...then each goes over the first connection with a stream free: packed, not spread.
        #expect((0..<5).map { _ in spread.lease("far", mayOpen: true, demand: 1000) } == [0, 0, 0, 0, 0])
        // 250 waiting need 3 connections; 3 photos need one; a host holding us gets no other.
        #expect((0..<4).map { _ in spread.lease("middle", mayOpen: true, demand: 250) } == [0, 1, 2, 0])
        #expect((0..<3).map { _ in spread.lease("few", mayOpen: true, demand: 3) } == [0, 0, 0])
        #expect((0..<3).map { _ in spread.lease("held", mayOpen: false, demand: 1000) } == [0, 0, 0])
        // A connection with a stream free again takes the next request; all released, the host is forgotten.
        spread.release("few", 0)
        #expect(spread.connectionsInUse("few") == 1)
        for _ in 0..<2 { spread.release("few", 0) }
        #expect(spread.connectionsInUse("few") == 0)
    }

    @Test func theWindowIsOneHostsConnectionsUntilTheFirstAnswerSizesIt() async {
        let limiter = RequestLimiter(total: 1024, perHost: 800, perHTTP1Host: 8, initialWindow: 800)
        #expect(limiter.currentWindow == 800)
        // Its line: the requests in flight and waiting, what its connections are sized for.
        for _ in 0..<3 { await limiter.acquire("https://far:443") }
        #expect(limiter.demand("https://far:443") == 3)
        // On loopback the first answer (1 ms, decodes of 2 ms, 2 threads) sizes it down to the minimum...
        limiter.resize(afterRequestOf: 0.001, decodeSeconds: 0.002, threads: 2)
        #expect(limiter.currentWindow == limiter.minimumWindow)
        // ...and 250 ms away, up to what hides the round trip.
        let far = RequestLimiter(total: 1024, perHost: 800, perHTTP1Host: 8, initialWindow: 5000)
        #expect(far.currentWindow == 1024, "never above the total")
        far.resize(afterRequestOf: 1.0, decodeSeconds: 0.002, threads: 2)
        #expect(far.currentWindow == 1024)
        for _ in 0..<3 { limiter.release("https://far:443") }
    }

    @Test func aHostThatRefusesGetsNoOtherConnection() async throws {
        // Every third request refused (429, Retry-After 0.2 s): the host holds us, so its
        // requests stay on one connection however many wait.
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let count = NIOLockedValueBox(0)
        let refuseEveryThird: TLSFixtureServer.Reply = { _ in
            let refused = count.withLockedValue { count -> Bool in
                count += 1
                return count % 3 == 1
            }
            return refused ? (status: .tooManyRequests, headers: [("Retry-After", "0.2")]) : nil
        }
        let server = try TLSFixtureServer(authority: authority, body: try Fixtures.photo("chelsea-96.jpg"), delay: .milliseconds(100),
                                          reply: refuseEveryThird)
        defer { server.shutdown() }
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: FetchLimits(), maxConnectionsPerHost: 4,
                                  streamsPerConnection: 2, caFile: authority.caFile)
        let limiter = RequestLimiter(total: 64, perHost: 24, perHTTP1Host: 4, minimumWindow: 24)
        // Its first answer a refusal; then 24 at once.
        let first = await fetchAll(["/first.jpg"], from: server, fetcher: fetcher, limiter: limiter)
        let results = await fetchAll((0..<24).map { "/p\($0).jpg" }, from: server, fetcher: fetcher, limiter: limiter)
        await fetcher.shutdown()
        // A photo refused again alone after its hold, and on each retry after that (about 1
        // in 81 of them here), spends its retries and fails with the refusal as its reason.
        let failed = (first + results).filter { $0 != "ok" }
        #expect(failed.count <= 3 && failed.allSatisfy { $0.contains("HTTP 429 Too Many Requests: refused") }, "\(failed)")
        #expect(server.connections == 1, "a refusing host got \(server.connections) connections")
        let host = try #require(limiter.hostReports().first)
        #expect(host.refusalCount > 0 && host.lowestRequestsAtOnce != nil, "\(host)")
    }

    @Test func aHostsPaceRecoversByTheRoundTrip() async throws {
        // 16 requests at once refused together: halved to 8. Once the host answers again,
        // each answer gives one more request at once (doubling each round trip): 8 answers
        // bring it back to its cap of 16, where adding one a round trip would need 8 rounds.
        let limiter = RequestLimiter(total: 64, perHost: 16, perHTTP1Host: 4, minimumWindow: 64)
        let host = "https://one.example:443"
        for _ in 0..<16 { #expect(await limiter.acquire(host) == nil) }
        #expect(limiter.refused(host, status: 429, wait: 0.05, budget: 10) == .hostHeld)
        for _ in 0..<16 { limiter.release(host) }
        #expect(limiter.hostReports().first?.requestsAtOnce == 8)
        #expect(!limiter.mayOpenConnection(host), "a host that refused gets no other connection")
        try await Task.sleep(for: .milliseconds(100))
        for answer in 1...8 {
            #expect(await limiter.acquire(host) == nil)
            limiter.answered(host)
            limiter.release(host)
            #expect(limiter.hostReports().first?.requestsAtOnce == min(16, 8 + answer), "after \(answer) answers")
        }
        #expect(limiter.mayOpenConnection(host), "back at its cap, not held: another connection may open")
    }

    @Test func aRefusalAmongAnswersIsThePhotosOwn() {
        // A host that answered 20 requests and then refuses one: the photo's own refusal,
        // the host not held and its pace unchanged; the same refusal first thing from a
        // new host holds it.
        let limiter = RequestLimiter(total: 64, perHost: 16, perHTTP1Host: 4)
        let busy = "https://busy.example:443", fresh = "https://fresh.example:443"
        for _ in 0..<20 { limiter.answered(busy) }
        #expect(limiter.refused(busy, status: 429, wait: 1, budget: 10) == .own)
        let report = limiter.hostReports().first { $0.host == busy }
        #expect(report?.waitSeconds == 0 && report?.lowestRequestsAtOnce == nil && report?.refusals == ["429": 1])
        #expect(limiter.refused(fresh, status: 429, wait: 1, budget: 10) == .hostHeld)
        // A photo refused before and refused again alone after its host's hold (the probe):
        // its own; two such in a row, the host's. A first refusal alone is the host's.
        #expect(limiter.refused(fresh, status: 429, wait: 1, budget: 10, alone: true) == .hostHeld)
        #expect(limiter.refused(fresh, status: 429, wait: 1, budget: 10, alone: true, refusedBefore: true) == .own)
        #expect(limiter.refused(fresh, status: 429, wait: 1, budget: 10, alone: true, refusedBefore: true) == .own)
        #expect(limiter.refused(fresh, status: 429, wait: 1, budget: 10, alone: true, refusedBefore: true) == .hostHeld)
        // Refused again, not alone: the host's (a host refusing many requests paces us).
        let other = "https://other.example:443"
        #expect(limiter.refused(other, status: 503, wait: 1, budget: 10) == .hostHeld)
        limiter.answered(other)
        #expect(limiter.refused(other, status: 503, wait: 1, budget: 10, refusedBefore: true) == .hostHeld)
        // A refusal naming no time is always the host's.
        #expect(limiter.refused(busy, status: 429, wait: 1, named: false, budget: 10) == .hostHeld)
    }

    @Test func aSlowProbeIsNoRefusal() async throws {
        // After a hold one request goes alone; answered slowly, it opens its host's line
        // after the patience (0.2 s here) all the same, rather than when its answer comes.
        let limiter = RequestLimiter(total: 8, perHost: 8, perHTTP1Host: 4, probePatience: 0.2)
        let url = "https://slow.example/p.jpg", host = RequestLimiter.host(of: url)
        #expect(await limiter.acquire(host) == nil)
        #expect(limiter.refused(host, status: 503, wait: 0.05, budget: 10) == .hostHeld)
        limiter.release(host)
        try await Task.sleep(for: .milliseconds(80))
        let probe = RequestSlot(limiter, for: url), next = RequestSlot(limiter, for: url)
        #expect(await probe.acquire() == nil)
        #expect(probe.sent(), "the first request after the hold goes alone")
        let started = Date()
        #expect(await next.acquire() == nil)
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.15 && waited < 1, "the line followed the unanswered probe after \(waited) s")
        #expect(!next.sent(), "the second goes beside it, not as a probe")
        probe.release()
        next.release()
    }

    @Test func slowAnswersDoNotHoldAPacedHostsLine() async throws {
        // A host paced down to one request at once: requests out past the patience (0.2 s)
        // unanswered stop counting against that pace, so the line goes on beside them.
        let limiter = RequestLimiter(total: 8, perHost: 8, perHTTP1Host: 4, probePatience: 0.2)
        let url = "https://slow.example/p.jpg", host = RequestLimiter.host(of: url)
        #expect(await limiter.acquire(host) == nil)
        #expect(limiter.refused(host, status: 503, wait: 0.05, budget: 10) == .hostHeld)
        limiter.release(host)
        try await Task.sleep(for: .milliseconds(80))
        let slots = (0..<4).map { _ in RequestSlot(limiter, for: url) }
        let started = Date()
        for slot in slots {
            #expect(await slot.acquire() == nil)
            slot.sent()
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.3 && waited < 2, "4 requests, none answered, each let the next go after its patience: \(waited) s")
        #expect(limiter.requestsInFlight(to: host) == 4)
        for slot in slots { slot.release() }
        #expect(limiter.requestsInFlight(to: host) == 0 && limiter.requestsInFlight == 0)
    }

    @Test func aServerAdvertisingOneStreamFailsNothing() async throws {
        // SETTINGS_MAX_CONCURRENT_STREAMS 1: the requests beyond it wait in the client for
        // the stream, within their deadlines; none fails, none is lost.
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try TLSFixtureServer(authority: authority, body: try Fixtures.photo("chelsea-96.jpg"), maxConcurrentStreams: 1,
                                          delay: .milliseconds(20))
        defer { server.shutdown() }
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: FetchLimits(), maxConnectionsPerHost: 2,
                                  streamsPerConnection: 100, caFile: authority.caFile)
        let limiter = RequestLimiter(total: 64, perHost: 64, perHTTP1Host: 4, minimumWindow: 64)
        let results = await fetchAll((0..<40).map { "/p\($0).jpg" }, from: server, fetcher: fetcher, limiter: limiter)
        await fetcher.shutdown()
        #expect(results.count == 40 && results.allSatisfy { $0 == "ok" }, "\(results.filter { $0 != "ok" })")
        #expect(server.requestsAnswered == 40)
    }
}
