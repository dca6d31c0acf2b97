import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import AvatarCacheFetching
import AvatarCacheModel
import AvatarCacheSupport
import AvatarCacheTestKit

/// The fetcher over a real connection: errors classified by type, the body's declared size
/// told, the byte limit where it is reached, and each connection made to an address its
/// check passed.
@Suite(.serialized) struct HTTPFetcherTests {
    @Test func networkErrorsAreClassifiedByTheirTypeNotTheirText() {
        struct Worded: Error, CustomStringConvertible { var description: String }
        #expect(HTTPFetcher.classify(ChannelError.connectTimeout(.seconds(1))).failureClass == .timeout)
        #expect(HTTPFetcher.classify(IOError(errnoCode: ETIMEDOUT, reason: "connect")).failureClass == .timeout)
        #expect(HTTPFetcher.classify(IOError(errnoCode: ECONNREFUSED, reason: "connect")).failureClass == .network)
        // Words in a message decide nothing: a proxy's page saying "timeout" is not one.
        #expect(HTTPFetcher.classify(Worded(description: "upstream said: gateway timeout")).failureClass == .network)
        #expect(HTTPFetcher.classify(Worded(description: "timed out")).failureClass == .network)
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
        #expect(bodies == [Digests.sha256Hex(try Fixtures.photo("chelsea.jpg")), Digests.sha256Hex(try Fixtures.photo("coffee.jpg"))])
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
