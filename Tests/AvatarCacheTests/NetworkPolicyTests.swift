import Foundation
import Testing
@testable import AvatarCache

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

    /// `--allow-private-networks` opens loopback and private ranges for tests and
    /// intranets, never link-local (the cloud metadata address), unspecified, multicast
    /// or reserved addresses: only an exact `--allow-host` does. The policy alone decides
    /// here (numeric hosts: no DNS query, no connection).
    @Test func privateNetworksDoNotOpenLinkLocalUnspecifiedOrMulticast() async throws {
        let policy = NetworkPolicy(allowPrivateNetworks: true)
        for url in ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/",
                    "http://0.0.0.0:8080/a.jpg", "http://[::]/", "http://224.0.0.1/", "http://[ff02::1]/", "http://[fe80::1]/",
                    "http://240.0.0.1/", "http://[64:ff9b::a9fe:a9fe]/"] {
            do {
                try await policy.checkAddresses(of: URL(string: url)!)
                Issue.record("\(url) was allowed")
            } catch let failure as SourceFailure {
                #expect(failure.failureClass == .blocked && failure.reason.contains("only --allow-host"), "\(url): \(failure)")
            }
        }
        for url in ["http://127.0.0.1:1/a.jpg", "http://[::1]:1/", "http://10.1.2.3/", "http://192.168.0.10/", "http://localhost:1/"] {
            try await policy.checkAddresses(of: URL(string: url)!)
        }
        // Named exactly, a host is allowed whatever it is; its neighbour is not.
        let named = NetworkPolicy(allowPrivateNetworks: true, allowedHosts: ["169.254.169.254"])
        try await named.checkAddresses(of: URL(string: "http://169.254.169.254/latest/meta-data/")!)
        await #expect(throws: SourceFailure.self) { try await named.checkAddresses(of: URL(string: "http://169.254.169.253/")!) }
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
