import Foundation
import Testing
@testable import AvatarCacheFetching
import AvatarCacheTestKit
import AsyncHTTPClient
import NIOCore
import NIOHTTP2

/// Servers rotate their HTTP/2 connections (GOAWAY after a number of requests; streams
/// past it refused): a request the server never processed is sent again at once on a new
/// connection, never a failure. Over TLS with a certificate authority made for the run and
/// trusted by the fetcher (`caFile`); everything on 127.0.0.1. (An operator's own authority
/// through `--ca-file`, the binary run: AvatarCacheEndToEndTests' OperatorCertificateTests.)
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

    /// Network failures in words a person reads, never a library type's dump.
    @Test func failuresAreInWords() {
        let cases: [(Error, String)] = [
            (HTTPClientError.remoteConnectionClosed, "the server closed the connection before answering"),
            (HTTPClientError.connectTimeout, "timed out connecting to the server"),
            (HTTPClientError.readTimeout, "timed out: the server sent nothing for the whole --timeout"),
            (HTTPClientError.bodyLengthMismatch, "the body was not as long as its Content-Length said"),
            (IOError(errnoCode: ECONNREFUSED, reason: "connect"), "the server refused the connection (nothing listens on that port)"),
            (IOError(errnoCode: ECONNRESET, reason: "read"), "the server reset the connection"),
            (NIOHTTP2Errors.streamClosed(streamID: 3, errorCode: .refusedStream), "the server refused the request (HTTP/2 REFUSED_STREAM) again and again"),
            (NIOHTTP2Errors.streamClosed(streamID: 5, errorCode: .cancel), "the server closed the connection before answering (HTTP/2 GOAWAY) again and again"),
            (ChannelError.ioOnClosedChannel, "the server closed the connection before answering"),
        ]
        for (error, words) in cases {
            #expect(HTTPFetcher.classify(error).reason == words, "\(error)")
        }
        #expect(HTTPFetcher.wasNotProcessed(NIOHTTP2Errors.streamClosed(streamID: 3, errorCode: .refusedStream)))
        #expect(!HTTPFetcher.wasNotProcessed(NIOHTTP2Errors.streamClosed(streamID: 3, errorCode: .protocolError)), "a protocol error is the server's answer")
        #expect(!HTTPFetcher.wasNotProcessed(IOError(errnoCode: ECONNREFUSED, reason: "connect")), "nothing listens: a failure of its own")
    }

    /// A run asks the system for a host's addresses once, not once a photo: 300 questions
    /// for one name, one resolution remembered (and answered by it).
    @Test func aHostIsResolvedOnceNotOncePerPhoto() async throws {
        // A numeric name of this test's own (getaddrinfo answers it without any network,
        // and no other test asks it).
        let host = "127.0.0.77"
        NetworkPolicy.remembered.withLock { $0[host] = nil }
        let first = try await NetworkPolicy.resolveRemembered(host)
        #expect(first == [NetworkPolicy.Address(bytes: [127, 0, 0, 77])])
        // What the table holds is what every later question gets, without getaddrinfo.
        let marker = [NetworkPolicy.Address(bytes: [127, 0, 0, 9])]
        NetworkPolicy.remembered.withLock { $0[host] = (marker, $0[host]!.until) }
        let answers = try await withThrowingTaskGroup(of: [NetworkPolicy.Address].self) { group in
            for _ in 0..<300 { group.addTask { try await NetworkPolicy.resolveRemembered(host) } }
            var all: [[NetworkPolicy.Address]] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        #expect(answers.count == 300 && answers.allSatisfy { $0 == marker })
        NetworkPolicy.remembered.withLock { $0[host] = nil }
    }
}
