import Synchronization

/// Which connection to a host a request goes over: HTTP/2 multiplexes a host's requests as
/// streams of one connection, and a server allows only so many at once (nginx 128, Google's
/// front ends 100); the rest would queue in the client, a round trip each batch. So, as Go's
/// HTTP/2 transport does, a request that finds every connection to its host at
/// `streamsPerConnection` opens another, up to `maxConnections`; otherwise it goes over the
/// least busy one.
///
/// Connection `n` of a host is the fetcher's client number `n` (each client its own pool,
/// so its own connection to the host); connection 0 is the one every host starts with. A
/// host that holds us (it refused, or is held) or speaks HTTP/1.1 (whose client keeps up to
/// `--max-connections-per-host` connections of its own) gets no other: the caller says so
/// (`mayOpen`).
final class ConnectionSpread: Sendable {
    let streamsPerConnection: Int
    let maxConnections: Int
    /// Per host, the requests in flight over each of its connections; a host with none in
    /// flight is forgotten (its connections stay in their clients' pools until idle).
    private let inFlight = Mutex<[String: [Int]]>([:])

    init(streamsPerConnection: Int, maxConnections: Int) {
        self.streamsPerConnection = max(1, streamsPerConnection)
        self.maxConnections = max(1, maxConnections)
    }

    /// The connection for a request to `host`, counted in flight until `release`.
    func lease(_ host: String, mayOpen: Bool) -> Int {
        inFlight.withLock { all in
            var counts = all[host] ?? [0]
            var chosen = 0
            for index in counts.indices where counts[index] < counts[chosen] { chosen = index }
            if counts[chosen] >= streamsPerConnection, mayOpen, counts.count < maxConnections {
                counts.append(0)
                chosen = counts.count - 1
            }
            counts[chosen] += 1
            all[host] = counts
            return chosen
        }
    }

    /// The request over connection `index` to `host` is done.
    func release(_ host: String, _ index: Int) {
        inFlight.withLock { all in
            guard var counts = all[host], counts.indices.contains(index) else { return }
            counts[index] -= 1
            all[host] = counts.allSatisfy { $0 <= 0 } ? nil : counts
        }
    }

    /// Connections to `host` with requests in flight now (for tests).
    func connectionsInUse(_ host: String) -> Int {
        inFlight.withLock { $0[host]?.filter { $0 > 0 }.count ?? 0 }
    }
}
