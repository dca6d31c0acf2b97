import Synchronization

/// Which connection to a host a request goes over: HTTP/2 multiplexes a host's requests as
/// streams of one connection, and a server allows only so many at once (nginx 128, Google's
/// front ends 100); the rest would queue in the client, a round trip each batch. So, as Go's
/// HTTP/2 transport does, a request that finds every connection to its host at
/// `streamsPerConnection` opens another, up to `maxConnections`; otherwise it goes over the
/// first connection with a stream free (packed: a few requests in flight share one
/// connection, as cheap on loopback as before there were several).
///
/// A connection costs its set-up (TCP, TLS, HTTP/2's settings: about four round trips before
/// its first answer), so the ones a host's line will need are opened together, at its first
/// requests, not one by one once the window has grown: while a host's requests (in flight
/// and waiting, `demand`) need more connections than it has, each request that finds all of
/// them busy opens the next. Far away, the window that grows at the first answer then finds
/// its connections ready.
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
    /// `demand`: the host's requests in flight and waiting, this one included.
    func lease(_ host: String, mayOpen: Bool, demand: Int = 1) -> Int {
        inFlight.withLock { all in
            var counts = all[host] ?? [0]
            let chosen: Int
            let wanted = min(maxConnections, (max(1, demand) + streamsPerConnection - 1) / streamsPerConnection)
            if mayOpen, counts.count < wanted, counts.allSatisfy({ $0 > 0 }) {
                counts.append(0)
                chosen = counts.count - 1
            } else if let free = counts.firstIndex(where: { $0 < streamsPerConnection }) {
                chosen = free
            } else if mayOpen, counts.count < maxConnections {
                counts.append(0)
                chosen = counts.count - 1
            } else {
                chosen = counts.indices.min { counts[$0] < counts[$1] } ?? 0
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
