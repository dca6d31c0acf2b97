import Foundation
import Testing
import AvatarCacheTestSupport
@testable import AvatarCacheFetching
@testable import AvatarCacheModel

/// Servers rotate their HTTP/2 connections (GOAWAY after a number of requests; streams
/// past it refused): a request the server never processed is sent again at once on a new
/// connection, never a failure. Over TLS with a certificate authority made for the run and
/// trusted through `--ca-file`; everything on 127.0.0.1.
@Suite struct ConnectionRotationTests {
    @Test func aServerRotatingItsConnectionsFailsNoPhoto() async throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let photo = try Fixtures.photo("chelsea.jpg")
        let server = try TLSFixtureServer(authority: authority, body: photo, streamsPerConnection: 10)
        defer { server.shutdown() }
        var limits = FetchLimits()
        limits.retries = 0
        let fetcher = HTTPFetcher(policy: NetworkPolicy(allowPrivateNetworks: true), limits: limits, maxConnectionsPerHost: 8, caFile: authority.caFile)
        // 150 photos, 32 in flight, from a server that rotates its connection every 10 requests.
        var results: [String] = []
        for batch in stride(from: 0, to: 150, by: 32) {
            results += await withTaskGroup(of: String.self) { group in
                for index in batch..<min(batch + 32, 150) {
                    group.addTask {
                        do {
                            let result = try await fetcher.fetch(server.url("/\(index).jpg"))
                            if case .fetched = result { return "ok" }
                            return "other"
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
        await fetcher.shutdown()
        let failed = results.filter { $0 != "ok" }
        #expect(failed.isEmpty, "\(failed.count) failed, the first: \(failed.first.map { String($0.prefix(200)) } ?? "")")
        #expect(server.requestsAnswered == 150, "\(server.requestsAnswered) answered")
        #expect(server.connections >= 15, "the server rotated its connections: \(server.connections)")
        #expect(server.streamsRefused > 0, "the client opened streams past a connection's last")
        #expect(fetcher.requestsResent >= server.streamsRefused, "each refused or cancelled stream sent again: \(fetcher.requestsResent) of \(server.streamsRefused)")
    }
}
