import Foundation
import Testing
@testable import AvatarCacheFetching
@testable import AvatarCacheSupport

@Suite struct NetworkPolicyTests {
    func v4(_ text: String) -> NetworkPolicy.Address {
        NetworkPolicy.Address(bytes: text.split(separator: ".").map { UInt8($0)! })
    }

    func v6(_ text: String) -> NetworkPolicy.Address {
        var address = in6_addr()
        precondition(inet_pton(AF_INET6, text, &address) == 1)
        return NetworkPolicy.Address(bytes: withUnsafeBytes(of: &address) { Array($0) })
    }

    @Test(arguments: ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                      "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255"])
    func privateIPv4IsRefused(address: String) {
        #expect(NetworkPolicy.nonPublicReason(v4(address)) != nil)
    }

    @Test(arguments: ["8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1"])
    func publicIPv4IsAllowed(address: String) {
        #expect(NetworkPolicy.nonPublicReason(v4(address)) == nil)
    }

    @Test(arguments: ["::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::10.0.0.1"])
    func privateIPv6IsRefused(address: String) {
        #expect(NetworkPolicy.nonPublicReason(v6(address)) != nil)
    }

    @Test(arguments: ["2606:4700::1111", "::ffff:8.8.8.8"])
    func publicIPv6IsAllowed(address: String) {
        #expect(NetworkPolicy.nonPublicReason(v6(address)) == nil)
    }

    @Test func onlyHTTPAndHTTPS() throws {
        let policy = NetworkPolicy(allowPrivateNetworks: false)
        for url in ["file:///etc/passwd", "ftp://h/a.jpg", "gopher://h/", "javascript:alert(1)"] {
            #expect(throws: SourceFailure.self) { _ = try policy.checkedURL(url) }
            do { _ = try policy.checkedURL(url) } catch let failure as SourceFailure {
                #expect(failure.failureClass == .blocked || failure.failureClass == .invalidURL, "\(url): \(failure)")
            }
        }
        #expect(try policy.checkedURL("https://example.com/a.jpg").host == "example.com")
    }

    @Test func loopbackHostIsRefusedAfterResolution() async throws {
        let policy = NetworkPolicy(allowPrivateNetworks: false)
        await #expect(throws: SourceFailure.self) {
            try await policy.checkAddresses(of: URL(string: "http://localhost:8080/a.jpg")!)
        }
        try await NetworkPolicy(allowPrivateNetworks: true).checkAddresses(of: URL(string: "http://localhost:8080/a.jpg")!)
    }

    /// Resolves numeric hosts (and "localhost") by parsing them, and records every host it
    /// was asked: the policy's only I/O, replaced, so these checks touch no network.
    final class OfflineResolver: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var asked: [String] = []

        func resolve(_ host: String) throws -> [NetworkPolicy.Address] {
            lock.withLock { asked.append(host) }
            if host == "localhost" { return [NetworkPolicy.Address(bytes: [127, 0, 0, 1])] }
            var v4 = in_addr(), v6 = in6_addr()
            if inet_pton(AF_INET, host, &v4) == 1 { return [NetworkPolicy.Address(bytes: withUnsafeBytes(of: &v4) { Array($0) })] }
            if inet_pton(AF_INET6, host, &v6) == 1 { return [NetworkPolicy.Address(bytes: withUnsafeBytes(of: &v6) { Array($0) })] }
            throw SourceFailure(.network, "not a numeric host in this test: \(host)")
        }
    }

    /// `--allow-private-networks` opens loopback and private ranges for tests and
    /// intranets, never link-local (the cloud metadata address), unspecified, multicast
    /// or reserved addresses: only an exact `--allow-host` does. The policy alone decides
    /// here, with an offline resolver: nothing is resolved or connected, whatever the
    /// policy does.
    @Test func privateNetworksDoNotOpenLinkLocalUnspecifiedOrMulticast() async throws {
        let offline = OfflineResolver()
        let policy = NetworkPolicy(allowPrivateNetworks: true, resolver: { try offline.resolve($0) })
        let refused = ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/",
                       "http://0.0.0.0:8080/a.jpg", "http://[::]/", "http://224.0.0.1/", "http://[ff02::1]/", "http://[fe80::1]/",
                       "http://240.0.0.1/", "http://[64:ff9b::a9fe:a9fe]/"]
        for url in refused {
            do {
                try await policy.checkAddresses(of: URL(string: url)!)
                Issue.record("\(url) was allowed")
            } catch let failure as SourceFailure {
                #expect(failure.failureClass == .blocked && failure.reason.contains("only --allow-host"), "\(url): \(failure)")
            }
        }
        let allowed = ["http://127.0.0.1:1/a.jpg", "http://[::1]:1/", "http://10.1.2.3/", "http://192.168.0.10/", "http://localhost:1/"]
        for url in allowed {
            try await policy.checkAddresses(of: URL(string: url)!)
        }
        #expect(offline.asked.count == refused.count + allowed.count, "every check went through the offline resolver: \(offline.asked)")
        // Named exactly, a host is allowed whatever it is (not even resolved); its neighbour is not.
        let named = NetworkPolicy(allowPrivateNetworks: true, allowedHosts: ["169.254.169.254"], resolver: { try offline.resolve($0) })
        try await named.checkAddresses(of: URL(string: "http://169.254.169.254/latest/meta-data/")!)
        await #expect(throws: SourceFailure.self) { try await named.checkAddresses(of: URL(string: "http://169.254.169.253/")!) }
        #expect(offline.asked.last == "169.254.169.253" && !offline.asked.dropLast().contains("169.254.169.253"))
    }

    @Test func byteSizes() {
        #expect(ByteSize.parse("100MB") == 100_000_000)
        #expect(ByteSize.parse("512kb") == 512_000)
        #expect(ByteSize.parse("2GB") == 2_000_000_000)
        #expect(ByteSize.parse("64MiB") == 67_108_864)
        #expect(ByteSize.parse("1.5MB") == 1_500_000)
        #expect(ByteSize.parse("1234") == 1234)
        #expect(ByteSize.parse("lots") == nil)
        #expect(ByteSize.parse("-5MB") == nil)
    }

    @Test func userInfoIsRedacted() {
        #expect(redactedURL("https://user:secret@h.example/a.jpg") == "https://h.example/a.jpg")
        #expect(redactedURL("https://h.example/a.jpg?x=1") == "https://h.example/a.jpg?x=1")
    }
}
