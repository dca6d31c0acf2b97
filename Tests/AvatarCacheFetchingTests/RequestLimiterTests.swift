import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import AvatarCacheFetching

/// The limiter alone: each host its share, the hosts by turns.
@Suite struct RequestLimiterTests {
    /// Whether `acquire` returns within `seconds`.
    func acquired(_ limiter: RequestLimiter, _ host: String, within seconds: Double = 0.5) async -> Bool {
        let done = NIOLockedValueBox(false)
        let task = Task {
            await limiter.acquire(host)
            done.withLockedValue { $0 = true }
        }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !done.withLockedValue({ $0 }) { try? await Task.sleep(nanoseconds: 10_000_000) }
        _ = task
        return done.withLockedValue { $0 }
    }

    @Test func aHostAtItsCapLeavesTheOthersTheirTurn() async {
        let limiter = RequestLimiter(total: 4, perHost: 2, perHTTP1Host: 1)
        let a = "https://a.test:443", b = "https://b.test:443"
        #expect(await acquired(limiter, a))
        #expect(await acquired(limiter, a))
        #expect(await !acquired(limiter, a, within: 0.2), "a third to a host capped at 2 waits")
        #expect(await acquired(limiter, b), "another host goes on")
        #expect(limiter.requestsInFlight == 3 && limiter.requestsInFlight(to: a) == 2)
        // The waiting one takes a's slot when one is given back.
        limiter.release(a)
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(limiter.requestsInFlight(to: a) == 2 && limiter.requestsInFlight == 3)
    }

    @Test func anHTTP1HostGetsItsConnections() async {
        let limiter = RequestLimiter(total: 100, perHost: 50, perHTTP1Host: 2)
        let plain = RequestLimiter.host(of: "http://photos.test/a.jpg")
        #expect(plain == "http://photos.test:80")
        #expect(await acquired(limiter, plain))
        #expect(await acquired(limiter, plain))
        #expect(await !acquired(limiter, plain, within: 0.2), "an http:// host: its 2 connections")
        let tls = RequestLimiter.host(of: "https://photos.test/a.jpg")
        for _ in 0..<3 { #expect(await acquired(limiter, tls)) }
        limiter.answeredOverHTTP1(tls)
        #expect(await !acquired(limiter, tls, within: 0.2), "an https:// host that answered over HTTP/1.1: its connections")
    }

    @Test func theWindowHidesTheRoundTripAndNoMore() {
        // Two decode threads at 3 ms a photo: requests of 2 ms (loopback) need no more than
        // the minimum; of 100 ms, 1.5 × 2 × 0.1 / 0.003 = 100; of 500 ms, more than the total.
        let limiter = RequestLimiter(total: 256, perHost: 128, perHTTP1Host: 8)
        #expect(limiter.currentWindow == 16)
        for _ in 0..<50 { limiter.resize(afterRequestOf: 0.002, decodeSeconds: 0.003, threads: 2) }
        #expect(limiter.currentWindow == 16)
        for _ in 0..<300 { limiter.resize(afterRequestOf: 0.1, decodeSeconds: 0.003, threads: 2) }
        #expect(limiter.currentWindow == 100)
        for _ in 0..<300 { limiter.resize(afterRequestOf: 0.5, decodeSeconds: 0.003, threads: 2) }
        #expect(limiter.currentWindow == 256)
        for _ in 0..<300 { limiter.resize(afterRequestOf: 0.002, decodeSeconds: 0.003, threads: 2) }
        #expect(limiter.currentWindow == 16, "and back when the round trips shorten")
    }

    @Test func theHostsTakeTurnsWhenTheTotalIsFull() async {
        // One slot; a waits with three requests, then b with one: b goes second, not fourth.
        let limiter = RequestLimiter(total: 1, perHost: 10, perHTTP1Host: 10)
        let a = "https://a.test:443", b = "https://b.test:443"
        await limiter.acquire(a)
        let order = NIOLockedValueBox<[String]>([])
        var tasks: [Task<Void, Never>] = []
        for (index, host) in [(1, a), (2, a), (3, a), (4, b)] {
            tasks.append(Task {
                await limiter.acquire(host)
                order.withLockedValue { $0.append("\(host.dropFirst(8).prefix(1))\(index)") }
                try? await Task.sleep(nanoseconds: 20_000_000)
                limiter.release(host)
            })
            try? await Task.sleep(nanoseconds: 30_000_000)
        }
        limiter.release(a)
        for task in tasks { await task.value }
        #expect(order.withLockedValue { $0 } == ["a1", "b4", "a2", "a3"])
    }
}
