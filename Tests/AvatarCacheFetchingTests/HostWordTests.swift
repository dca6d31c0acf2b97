import Foundation
import Testing
@testable import AvatarCacheFetching
import AvatarCacheSupport
import AvatarCacheTestKit

/// A host's word on its pace read from its headers, bad values taken sanely; the limiter
/// holding that host's line (and only its line) until then, within the budget.
struct HostWordTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func signal(_ headers: [(String, String)], retryAfter: Bool = true) -> HostLimitSignal? {
        HostLimitSignal.read(headers, now: now, retryAfter: retryAfter)
    }

    @Test func eachHeaderFormNamesItsWait() {
        #expect(signal([("Retry-After", "120")]) == HostLimitSignal(wait: 120, header: "Retry-After"))
        #expect(signal([("Retry-After", "Fri, 15 Jan 2027 08:00:30 GMT")])?.wait == 30, "an HTTP date, 30 s on")
        #expect(signal([("RateLimit-Policy", "\"default\";q=100;w=60"), ("RateLimit", "\"default\";r=0;t=7")])?.wait == 7)
        #expect(signal([("RateLimit", "\"burst\";r=5;t=1, \"day\";r=0;t=3600")])?.wait == 3600, "the item with nothing left")
        #expect(signal([("RateLimit", "limit=10, remaining=0, reset=4")])?.wait == 4, "the earlier drafts' form")
        #expect(signal([("RateLimit-Limit", "10"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "9")])?.wait == 9)
        #expect(signal([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1800000042")])?.wait == 42, "a Unix time, as GitHub sends it")
        #expect(signal([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "5")])?.wait == 5, "delta seconds")
        // Something left: no wait.
        #expect(signal([("RateLimit", "\"default\";r=3;t=7")]) == nil)
        #expect(signal([("X-RateLimit-Remaining", "12"), ("X-RateLimit-Reset", "1800000042")]) == nil)
        // Retry-After first; not read where asked not to (an answer that is no refusal).
        #expect(signal([("Retry-After", "2"), ("RateLimit", "\"d\";r=0;t=9")])?.wait == 2)
        #expect(signal([("Retry-After", "2"), ("RateLimit", "\"d\";r=0;t=9")], retryAfter: false)?.wait == 9)
    }

    @Test func badValuesNameNoWaitOrAClampedOne() {
        #expect(signal([("Retry-After", "-1")]) == nil)
        #expect(signal([("Retry-After", "0")]) == nil)
        #expect(signal([("Retry-After", "soon")]) == nil)
        #expect(signal([("Retry-After", "1e9")]) == nil)
        #expect(signal([("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT")]) == nil, "a date long past")
        #expect(signal([("Retry-After", "99999999999")])?.wait == HostLimitSignal.longest, "clamped to a year: over any budget")
        #expect(signal([("RateLimit", "\"default\";r=zero;t=soon")]) == nil)
        #expect(signal([("RateLimit", ";;;==,,r=0")]) == nil, "nothing left, but no reset named")
        #expect(signal([("RateLimit", "\"d\";r=0;t=-5")]) == nil)
        #expect(signal([("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1700000000")]) == nil, "a reset already past")
        #expect(signal([("X-RateLimit-Remaining", "none"), ("X-RateLimit-Reset", "5")]) == nil)
    }

    @Test func aHeldHostWaitsAloneAndFailsItsLinePastTheBudget() async throws {
        let limiter = RequestLimiter(total: 8, perHost: 4, perHTTP1Host: 4)
        let slow = "http://slow.example:80", other = "http://other.example:80"
        #expect(await limiter.acquire(slow) == nil)
        // Refused, held 0.5 s: its requests at once halved (1 in flight: 1), the line held.
        #expect(limiter.refused(slow, status: 429, wait: 0.5, budget: 10) == .hostHeld)
        limiter.release(slow)
        let started = Date()
        async let waiting: Double = {
            _ = await limiter.acquire(slow)
            return Date().timeIntervalSince(started)
        }()
        // Another host goes at once.
        #expect(await limiter.acquire(other) == nil)
        #expect(Date().timeIntervalSince(started) < 0.2)
        let waited = await waiting
        #expect(waited >= 0.45 && waited < 2, "held \(waited) s")
        limiter.release(slow)
        limiter.release(other)
        // An hour asked of a 10 s budget: the host's line and every later request fail at once.
        guard case .outOfBudget(let failure) = limiter.refused(slow, status: 503, wait: 3600, budget: 10) else {
            Issue.record("an hour is over the budget")
            return
        }
        #expect(failure.failureClass == .rateLimited)
        #expect(failure.reason == "the host asked us to wait 3,600 s; over --max-host-wait 10 s")
        #expect(await limiter.acquire(slow)?.reason == failure.reason)
        #expect(await limiter.acquire(other) == nil, "the other host is not held")
        let report = try #require(limiter.hostReports().first { $0.host == slow })
        #expect(report.refusals == ["429": 1, "503": 1] && report.outOfBudget == failure.reason && report.lowestRequestsAtOnce == 1)
        #expect(report.waitSeconds >= 0.5 && report.waitSeconds < 0.6)
    }
}
