import Foundation

/// Requests in flight: at most `total` over all hosts, and at most a host's own cap to
/// one host, so that a host answering slowly (or timing out) holds only its own share and
/// the others keep the machine busy.
///
/// A host's cap: `perHost` (HTTP/2 multiplexes its requests as streams of one
/// connection; the server's own stream limit queues any beyond it in the client) until the
/// host has answered over HTTP/1.x, then `perHTTP1Host`, its connections (the politeness
/// limit): beyond them requests would only queue in the client, their deadlines running.
/// A plain http:// host speaks HTTP/1.1 from the start.
///
/// The requests allowed in flight at a time (the window) are as many as hide the network's
/// round trip, no more (`resize`, by Little's law: the decode threads' pace times a
/// request's time), from `minimumWindow` up to `total`. On loopback 128 streams in flight
/// cost a quarter more CPU than 16 for the same photos, and bought nothing.
/// Where other hosts are active, one host holds at most three quarters of the window.
///
/// Waiting requests are served per host in order, and the hosts by turns when a slot of
/// the total frees: a host with a thousand requests waiting does not go before one with a
/// single request. A request that waits again after a pause of its own (a retry's
/// `Retry-After`: it gave its slot back meanwhile) goes first among its host's.
public final class RequestLimiter: @unchecked Sendable {
    public let total: Int
    public let perHost: Int
    public let perHTTP1Host: Int

    private struct Host {
        var inFlight = 0
        var http1: Bool
        var waiting: [CheckedContinuation<Void, Never>] = []
        var head = 0
        var waitingCount: Int { waiting.count - head }
    }

    private let lock = NSLock()
    private var inFlight = 0 {
        didSet { peak = max(peak, inFlight) }
    }
    private var peak = 0
    private var hosts: [String: Host] = [:]
    /// Hosts with requests waiting, in the order they take turns.
    private var turns: [String] = []
    /// Hosts that answered over HTTP/1.x (bounded: cleared past 10,000).
    private var http1Hosts: Set<String> = []

    public let minimumWindow: Int
    private var window: Int

    public init(total: Int, perHost: Int, perHTTP1Host: Int, minimumWindow: Int = 16) {
        self.total = max(1, total)
        self.perHost = max(1, perHost)
        self.perHTTP1Host = max(1, perHTTP1Host)
        self.minimumWindow = min(self.total, max(1, minimumWindow))
        window = self.minimumWindow
    }

    /// Requests allowed in flight now.
    public var currentWindow: Int {
        lock.lock()
        defer { lock.unlock() }
        return window
    }

    /// The mean time of a request so far (moving: the last few dozen count most).
    private var meanRequestSeconds: Double?

    /// A request took `seconds`, its slot to its last byte; the decode threads (`threads`
    /// of them) take `decodeSeconds` a photo. The window becomes what keeps them fed while
    /// requests take that long, half as much again for the spread of both.
    public func resize(afterRequestOf seconds: Double, decodeSeconds: Double, threads: Int) {
        lock.lock()
        let mean = meanRequestSeconds.map { $0 + (seconds - $0) / 32 } ?? seconds
        meanRequestSeconds = mean
        let needed = 1.5 * Double(max(1, threads)) * mean / max(decodeSeconds, 0.000_1)
        let old = window
        window = min(total, max(minimumWindow, Int(min(needed, Double(total)).rounded(.up))))
        let granted = window > old ? grant() : []
        lock.unlock()
        for continuation in granted { continuation.resume() }
    }

    /// The key a URL's requests are limited by: scheme, host and port.
    public static func host(of urlString: String) -> String {
        guard let components = URLComponents(string: urlString), let host = components.host?.lowercased() else { return "" }
        let scheme = components.scheme?.lowercased() ?? ""
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// Requests in flight now, over all hosts (for tests and the report).
    public var requestsInFlight: Int {
        lock.lock()
        defer { lock.unlock() }
        return inFlight
    }

    /// The most requests in flight at once so far.
    public var peakRequestsInFlight: Int {
        lock.lock()
        defer { lock.unlock() }
        return peak
    }

    /// Requests in flight to `host` now.
    public func requestsInFlight(to host: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return hosts[host]?.inFlight ?? 0
    }

    /// What `key` may hold now: its own cap, and three quarters of the window when other
    /// hosts are active. Called locked.
    private func cap(_ host: Host, _ key: String) -> Int {
        let own = host.http1 ? min(perHost, perHTTP1Host) : perHost
        let others = hosts.count - (hosts[key] == nil ? 0 : 1)
        return min(own, others > 0 ? max(1, window * 3 / 4) : window)
    }

    /// Waits for a slot for a request to `host`; `first`: ahead of the host's others.
    public func acquire(_ host: String, first: Bool = false) async {
        await withCheckedContinuation { wait(host, first: first, $0) }
    }

    /// Takes a slot at once, or puts the request in its host's line.
    private func wait(_ host: String, first: Bool, _ continuation: CheckedContinuation<Void, Never>) {
        lock.lock()
        var entry = hosts[host] ?? Host(http1: host.hasPrefix("http://") || http1Hosts.contains(host))
        if entry.waitingCount == 0 && entry.inFlight < cap(entry, host) && inFlight < window {
            entry.inFlight += 1
            inFlight += 1
            hosts[host] = entry
            lock.unlock()
            continuation.resume()
            return
        }
        if entry.waitingCount == 0 { turns.append(host) }
        if first && entry.head > 0 {
            entry.head -= 1
            entry.waiting[entry.head] = continuation
        } else if first {
            entry.waiting.insert(continuation, at: 0)
        } else {
            entry.waiting.append(continuation)
        }
        hosts[host] = entry
        lock.unlock()
    }

    /// Gives a slot back; the next waiting request (the hosts by turns) takes it.
    public func release(_ host: String) {
        lock.lock()
        if var entry = hosts[host] {
            entry.inFlight -= 1
            hosts[host] = entry
        }
        inFlight -= 1
        let granted = grant()
        if let entry = hosts[host], entry.inFlight == 0, entry.waitingCount == 0 { hosts[host] = nil }
        lock.unlock()
        for continuation in granted { continuation.resume() }
    }

    /// The host answered over HTTP/1.x: its cap is its connections from now on.
    public func answeredOverHTTP1(_ host: String) {
        lock.lock()
        if !http1Hosts.contains(host) {
            if http1Hosts.count >= 10_000 { http1Hosts.removeAll() }
            http1Hosts.insert(host)
        }
        hosts[host]?.http1 = true
        lock.unlock()
    }

    /// Hands free slots to waiting requests, a host at a time by turns; called locked.
    private func grant() -> [CheckedContinuation<Void, Never>] {
        var granted: [CheckedContinuation<Void, Never>] = []
        var looked = 0
        while inFlight < window, !turns.isEmpty, looked < turns.count {
            let host = turns.removeFirst()
            guard var entry = hosts[host], entry.waitingCount > 0 else { continue }
            guard entry.inFlight < cap(entry, host) else {
                // At its own cap: its turn passes, it stays in line.
                turns.append(host)
                looked += 1
                continue
            }
            looked = 0
            granted.append(entry.waiting[entry.head])
            entry.head += 1
            if entry.head > 64 && entry.head * 2 > entry.waiting.count {
                entry.waiting.removeFirst(entry.head)
                entry.head = 0
            }
            entry.inFlight += 1
            inFlight += 1
            if entry.waitingCount > 0 { turns.append(host) }
            hosts[host] = entry
        }
        return granted
    }
}

/// One request's hold on a `RequestLimiter` slot, for its host: taken before the request,
/// given back while it waits to try again (a `Retry-After` holds no slot) and once it is done.
public final class RequestSlot: @unchecked Sendable {
    public let limiter: RequestLimiter
    public let host: String
    private let lock = NSLock()
    private var held = false

    public init(_ limiter: RequestLimiter, for urlString: String) {
        self.limiter = limiter
        self.host = RequestLimiter.host(of: urlString)
    }

    /// Takes a slot (none is taken twice); `first`: ahead of the host's other requests.
    public func acquire(first: Bool = false) async {
        guard !isHeld else { return }
        await limiter.acquire(host, first: first)
        markHeld()
    }

    private func markHeld() {
        lock.lock()
        held = true
        lock.unlock()
    }

    /// Gives the slot back, if held.
    public func release() {
        lock.lock()
        let was = held
        held = false
        lock.unlock()
        if was { limiter.release(host) }
    }

    private var isHeld: Bool {
        lock.lock()
        defer { lock.unlock() }
        return held
    }
}
