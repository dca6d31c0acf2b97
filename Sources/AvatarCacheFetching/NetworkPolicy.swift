import AvatarCacheSupport
import Foundation
import Glibc
import Synchronization
#if canImport(Glibc)
#endif

/// Which URLs may be fetched: http and https only, and only hosts whose every resolved
/// address is public. `allowPrivateNetworks` (tests, intranets) opens loopback and
/// private ranges, never link-local (the cloud metadata address among them),
/// unspecified, multicast or reserved addresses: those only an exact `allowedHosts`
/// name opens.
///
/// The check runs on the addresses the host name resolves to, before the request and
/// again for every redirect target, and returns them: the fetcher connects to one of
/// those very addresses (the name is not resolved again, so a DNS server answering
/// differently the second time, DNS rebinding, steers nothing), while TLS still checks
/// the certificate for the name.
public struct NetworkPolicy: Sendable {
    public var allowPrivateNetworks: Bool
    /// Hosts allowed whatever they resolve to: `host` or `host:port`, matched exactly
    /// (an intranet photo server, a test fixture). Redirects to other hosts are still checked.
    public var allowedHosts: Set<String>

    /// Host name -> its addresses. getaddrinfo; a test gives its own, so that checking a
    /// policy provably touches no network at all.
    public typealias Resolver = @Sendable (String) async throws -> [Address]
    let resolver: Resolver

    public init(allowPrivateNetworks: Bool, allowedHosts: Set<String> = [], resolver: @escaping Resolver = NetworkPolicy.resolveRemembered) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.resolver = resolver
    }

    func isExplicitlyAllowed(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if allowedHosts.contains(host) { return true }
        return url.port.map { allowedHosts.contains("\(host):\($0)") } ?? false
    }

    /// Parses and checks a URL string; throws `invalidURL` or `blocked`.
    /// Longest URL accepted, in bytes.
    public static let maxURLLength = 8192

    public func checkedURL(_ string: String) throws -> URL {
        guard string.utf8.count <= Self.maxURLLength else {
            throw SourceFailure(.invalidURL, "URL is \(string.utf8.count) bytes, over \(Self.maxURLLength)")
        }
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased() else {
            throw SourceFailure(.invalidURL, "not a URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw SourceFailure(.blocked, "scheme \"\(scheme)\" is not allowed (http and https only)")
        }
        guard let host = url.host, !host.isEmpty else {
            throw SourceFailure(.invalidURL, "URL has no host")
        }
        return url
    }

    /// Resolves the URL's host and refuses it when any address is not public: loopback and
    /// private ranges unless private networks are allowed; link-local, unspecified,
    /// multicast and reserved ones always (unless the host is allowed by name).
    /// Returns the addresses the connection is to be pinned to: those checked for a host
    /// name; none for an address written in the URL (checked too: it is its own address)
    /// or a host allowed by name (`--allow-host`, not checked, resolved as usual).
    @discardableResult
    public func checkAddresses(of url: URL) async throws -> [Address] {
        guard !isExplicitlyAllowed(url), let host = url.host else { return [] }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = try await resolver(bare)
        if addresses.isEmpty {
            throw SourceFailure(.network, "host \(bare) did not resolve")
        }
        for address in addresses {
            guard let refusal = Self.refusal(address) else { continue }
            if refusal.isPrivateNetwork {
                if allowPrivateNetworks { continue }
                throw SourceFailure(.blocked, "host \(bare) resolves to \(address.text), \(refusal.reason) (--allow-private-networks or --allow-host allows it)")
            }
            throw SourceFailure(.blocked, "host \(bare) resolves to \(address.text), \(refusal.reason): refused even with --allow-private-networks (only --allow-host with this exact host allows it)")
        }
        return Address(literal: bare) == nil ? addresses : []
    }

    /// Why an address is not public, and whether it is a loopback or private network
    /// (which `allowPrivateNetworks` opens) rather than link-local, unspecified, multicast
    /// or reserved (which nothing but an exact host name opens).
    public struct Refusal: Sendable, Equatable {
        public var reason: String
        public var isPrivateNetwork: Bool
    }

    /// Why an address is not public, or nil when it is.
    public static func nonPublicReason(_ address: Address) -> String? {
        refusal(address)?.reason
    }

    /// One resolved address, as raw bytes (4 for IPv4, 16 for IPv6).
    public struct Address: Sendable, Equatable {
        public var bytes: [UInt8]

        public init(bytes: [UInt8]) { self.bytes = bytes }

        /// An IPv4 or IPv6 address written out ("127.0.0.1", "::1"); nil for a name.
        public init?(literal text: String) {
            var v4 = in_addr(), v6 = in6_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                bytes = withUnsafeBytes(of: &v4) { Array($0) }
            } else if inet_pton(AF_INET6, text, &v6) == 1 {
                bytes = withUnsafeBytes(of: &v6) { Array($0) }
            } else {
                return nil
            }
        }

        public var text: String {
            if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
            var words: [String] = []
            for index in stride(from: 0, to: 16, by: 2) {
                words.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
            }
            return words.joined(separator: ":")
        }
    }

    public static func refusal(_ address: Address) -> Refusal? {
        func privateNetwork(_ reason: String) -> Refusal { Refusal(reason: reason, isPrivateNetwork: true) }
        func never(_ reason: String) -> Refusal { Refusal(reason: reason, isPrivateNetwork: false) }
        let b = address.bytes
        if b.count == 4 {
            switch (b[0], b[1]) {
            case (0, _): return never("an unspecified/this-network address")
            case (127, _): return privateNetwork("a loopback address")
            case (10, _): return privateNetwork("a private address")
            case (172, 16...31): return privateNetwork("a private address")
            case (192, 168): return privateNetwork("a private address")
            case (169, 254): return never("a link-local address")
            case (100, 64...127): return privateNetwork("a carrier-grade NAT address")
            case (192, 0) where b[2] == 0: return never("an IETF protocol address")
            case (198, 18...19): return privateNetwork("a benchmarking address")
            case (224...239, _): return never("a multicast address")
            case (240...255, _): return never("a reserved address")
            default: return nil
            }
        }
        guard b.count == 16 else { return never("an unknown address family") }
        if b.allSatisfy({ $0 == 0 }) { return never("the unspecified address") }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return privateNetwork("a loopback address") }
        // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64
        // (64:ff9b::a.b.c.d) addresses carry an IPv4 address: judge that one.
        if b[0..<10].allSatisfy({ $0 == 0 }) && ((b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0)) {
            return refusal(Address(bytes: Array(b[12..<16]))).map { Refusal(reason: "\($0.reason) (IPv4 in IPv6)", isPrivateNetwork: $0.isPrivateNetwork) }
        }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B {
            return refusal(Address(bytes: Array(b[12..<16]))).map { Refusal(reason: "\($0.reason) (NAT64)", isPrivateNetwork: $0.isPrivateNetwork) }
        }
        if b[0] & 0xFE == 0xFC { return privateNetwork("a unique-local address") }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return never("a link-local address") }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return privateNetwork("a site-local address") }
        if b[0] == 0xFF { return never("a multicast address") }
        return nil
    }

    /// A host's addresses as resolved within the last `rememberedFor` seconds: a run
    /// asks the system once a host, not once a photo (4,750 account photos made 4,767
    /// threads to resolve the same few names). The fetcher connects to the addresses the
    /// check passed, whatever the name resolves to later (DNS rebinding steers nothing).
    public static func resolveRemembered(_ host: String) async throws -> [Address] {
        // A remembered answer; else the question already asked (many photos of one new
        // host at once ask the system once); else a new question.
        let (known, asked) = remembered.withLock { table, inFlight -> ([Address]?, Task<[Address], Error>?) in
            if let entry = table[host], entry.until > DispatchTime.now().uptimeNanoseconds { return (entry.addresses, nil) }
            if let task = inFlight[host] { return (nil, task) }
            let task = Task { try await resolve(host) }
            inFlight[host] = task
            return (nil, task)
        }
        if let known { return known }
        defer { remembered.withLock { _, inFlight in inFlight[host] = nil } }
        let addresses = try await asked!.value
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(rememberedFor * 1e9)
        remembered.withLock { table, _ in
            if table.count > 10_000 { table.removeAll() }
            table[host] = (addresses, until)
        }
        return addresses
    }

    /// How long a resolution is used again.
    static let rememberedFor = 60.0
    static let remembered = RememberedAddresses()

    final class RememberedAddresses: Sendable {
        typealias Table = [String: (addresses: [Address], until: UInt64)]
        private struct State {
            var table: Table = [:]
            var inFlight: [String: Task<[Address], Error>] = [:]
        }
        private let state = Mutex(State())
        func withLock<T: Sendable>(_ body: (inout Table, inout [String: Task<[Address], Error>]) -> T) -> T {
            state.withLock { body(&$0.table, &$0.inFlight) }
        }
        /// The remembered answers alone (tests).
        func withLock<T: Sendable>(_ body: (inout Table) -> T) -> T {
            state.withLock { body(&$0.table) }
        }
    }

    /// getaddrinfo, off the cooperative pool (it blocks), on the system's pool of threads
    /// that outlive each question.
    public static func resolve(_ host: String) async throws -> [Address] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                var hints = addrinfo()
                hints.ai_family = AF_UNSPEC
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var result: UnsafeMutablePointer<addrinfo>?
                let status = getaddrinfo(host, nil, &hints, &result)
                guard status == 0 else {
                    let message = String(cString: gai_strerror(status))
                    continuation.resume(throwing: SourceFailure(.network, "cannot resolve \(host): \(message)"))
                    return
                }
                defer { freeaddrinfo(result) }
                var addresses: [Address] = []
                var cursor = result
                while let info = cursor {
                    if info.pointee.ai_family == AF_INET, let raw = info.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                            var address = sin.pointee.sin_addr
                            addresses.append(Address(bytes: withUnsafeBytes(of: &address) { Array($0) }))
                        }
                    } else if info.pointee.ai_family == AF_INET6, let raw = info.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                            var address = sin6.pointee.sin6_addr
                            addresses.append(Address(bytes: withUnsafeBytes(of: &address) { Array($0) }))
                        }
                    }
                    cursor = info.pointee.ai_next
                }
                continuation.resume(returning: addresses)
            }
        }
    }
}
