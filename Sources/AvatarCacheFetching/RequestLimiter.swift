import AvatarCacheSupport
import Foundation
import Synchronization

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
///
/// A host's pace is its own (`HostPace`): a host that says "later" (`refused`, `hold`) is
/// held, its whole line with it, until the time it named, while the others go on; its
/// requests at once are halved by refusals and grow back by one an answer. A refusal that
/// is one photo's own (the host answers the others) holds nothing but that photo, which
/// spends its own retries. Past `--max-host-wait` of holds, its waiting requests and any
/// after them fail at once.
public final class RequestLimiter: Sendable {
    public let total: Int
    public let perHost: Int
    public let perHTTP1Host: Int
    public let minimumWindow: Int
    /// Seconds a request to a paced host may be out unanswered before it stops counting
    /// against that pace, and a probe (the first request after a hold) before the rest of its
    /// line follows: a slow answer is not a refusal (`RequestSlot.sent`). Default 1.
    public let probePatience: Double

    fileprivate typealias Waiter = CheckedContinuation<SourceFailure?, Never>

    fileprivate struct Host {
        var inFlight = 0
        /// Of them, those out past `probePatience` to a paced host: slow, not refused, so no
        /// longer counted against its pace (`RequestSlot.sent`).
        var overdue = 0
        /// Requests counted against the host's pace.
        var paced: Int { inFlight - overdue }
        var http1: Bool
        var waiting: [Waiter] = []
        var head = 0
        var waitingCount: Int { waiting.count - head }
    }

    /// Everything that changes, behind one lock (`state`); changed in place through
    /// `withLock`, never copied out and back.
    fileprivate struct State {
        let perHost: Int
        let perHTTP1Host: Int
        var inFlight = 0 {
            didSet { peak = max(peak, inFlight) }
        }
        var peak = 0
        var hosts: [String: Host] = [:]
        /// Hosts with requests waiting, in the order they take turns.
        var turns: [String] = []
        /// Hosts that answered over HTTP/1.x (bounded: cleared past 10,000).
        var http1Hosts: Set<String> = []
        /// Each host's pace and what the report says of it (`HostPace`).
        var paces: [String: HostPace] = [:]
        /// Past this many paces, the quiet ones are forgotten (`forgetQuietHosts`).
        var forgetPast = 10_000
        /// Set when the run stops (`stopHolds`): a request for a held host fails at once.
        var holdsStopped: SourceFailure?
        var window: Int
        /// The mean time of a request so far (moving: the last few dozen count most).
        var meanRequestSeconds: Double?

        init(perHost: Int, perHTTP1Host: Int, window: Int) {
            self.perHost = perHost
            self.perHTTP1Host = perHTTP1Host
            self.window = window
        }
    }

    private let state: Mutex<State>

    /// `initialWindow`: the window until the first answer sizes it (`resize`); default
    /// `minimumWindow`.
    public init(total: Int, perHost: Int, perHTTP1Host: Int, minimumWindow: Int = 16, initialWindow: Int? = nil,
                probePatience: Double = 1) {
        self.probePatience = max(0, probePatience)
        self.total = max(1, total)
        self.perHost = max(1, perHost)
        self.perHTTP1Host = max(1, perHTTP1Host)
        self.minimumWindow = min(self.total, max(1, minimumWindow))
        let initial = min(self.total, max(self.minimumWindow, initialWindow ?? self.minimumWindow))
        state = Mutex(State(perHost: self.perHost, perHTTP1Host: self.perHTTP1Host, window: initial))
    }

    /// Requests allowed in flight now.
    public var currentWindow: Int {
        state.withLock { $0.window }
    }

    /// A request took `seconds`, its slot to its last byte; the decode threads (`threads`
    /// of them) take `decodeSeconds` a photo. The window becomes what keeps them fed while
    /// requests take that long, half as much again for the spread of both.
    public func resize(afterRequestOf seconds: Double, decodeSeconds: Double, threads: Int) {
        let granted = state.withLock { state -> [Waiter] in
            let mean = state.meanRequestSeconds.map { $0 + (seconds - $0) / 32 } ?? seconds
            state.meanRequestSeconds = mean
            let needed = 1.5 * Double(max(1, threads)) * mean / max(decodeSeconds, 0.000_1)
            let old = state.window
            state.window = min(total, max(minimumWindow, Int(min(needed, Double(total)).rounded(.up))))
            return state.window > old ? state.grant() : []
        }
        for continuation in granted { continuation.resume(returning: nil) }
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
        state.withLock { $0.inFlight }
    }

    /// The most requests in flight at once so far.
    public var peakRequestsInFlight: Int {
        state.withLock { $0.peak }
    }

    /// Requests to `host` in flight and waiting for a slot now: what its connections are
    /// sized for (`ConnectionSpread`).
    public func demand(_ host: String) -> Int {
        state.withLock { state in state.hosts[host].map { $0.inFlight + $0.waitingCount } ?? 0 }
    }

    /// Requests in flight to `host` now.
    public func requestsInFlight(to host: String) -> Int {
        state.withLock { $0.hosts[host]?.inFlight ?? 0 }
    }

    /// Waits for a slot for a request to `host`; `first`: ahead of the host's others.
    /// Returns nil with the slot taken, or, taking none, the failure of a host whose limits
    /// went past `--max-host-wait`.
    @discardableResult
    public func acquire(_ host: String, first: Bool = false) async -> SourceFailure? {
        await withCheckedContinuation { wait(host, first: first, $0) }
    }

    /// Takes a slot at once, or puts the request in its host's line.
    private func wait(_ host: String, first: Bool, _ continuation: Waiter) {
        let admission = state.withLock { $0.admit(host, first: first, continuation) }
        if case .now(let failure) = admission { continuation.resume(returning: failure) }
    }

    /// Gives a slot back; the next waiting request (the hosts by turns) takes it.
    public func release(_ host: String, overdue: Bool = false) {
        let granted = state.withLock { $0.release(host, overdue: overdue) }
        for continuation in granted { continuation.resume(returning: nil) }
    }

    /// Whether a request to `host` may open another connection to it (`ConnectionSpread`):
    /// not to an HTTP/1.x host (its client keeps its connections), nor to a host that holds
    /// us: one held, refusing, or at a pace below its cap gets fewer connections, not more.
    public func mayOpenConnection(_ host: String) -> Bool {
        state.withLock { state in
            guard !(state.hosts[host]?.http1 ?? (host.hasPrefix("http://") || state.http1Hosts.contains(host))) else { return false }
            guard let pace = state.paces[host] else { return true }
            return pace.allowance == nil && !pace.probing && pace.exhausted == nil
                && pace.heldUntil <= DispatchTime.now().uptimeNanoseconds
        }
    }

    /// The host answered over HTTP/1.x: its cap is its connections from now on.
    public func answeredOverHTTP1(_ host: String) {
        state.withLock { state in
            if !state.http1Hosts.contains(host) {
                if state.http1Hosts.count >= 10_000 { state.http1Hosts.removeAll() }
                state.http1Hosts.insert(host)
            }
            state.hosts[host]?.http1 = true
        }
    }
}

extension RequestLimiter.State {
    typealias Waiter = RequestLimiter.Waiter

    /// What `admit` did with a request: answered it now (nil: the slot taken; else the
    /// failure of its host), or put it in its host's line.
    enum Admission {
        case now(SourceFailure?)
        case queued
    }

    /// What `key` may hold now: its own cap, and three quarters of the window when other
    /// hosts are active.
    func cap(_ host: RequestLimiter.Host, _ key: String) -> Int {
        let own = host.http1 ? min(perHost, perHTTP1Host) : perHost
        let others = hosts.count - (hosts[key] == nil ? 0 : 1)
        let shared = min(own, others > 0 ? max(1, window * 3 / 4) : window)
        guard let pace = paces[key] else { return shared }
        if pace.probing { return 1 }
        guard let allowance = pace.allowance else { return shared }
        return min(shared, max(1, Int(allowance)))
    }

    /// The host's own cap, its share of the window aside.
    func ownCap(_ key: String) -> Int {
        let http1 = hosts[key]?.http1 ?? (key.hasPrefix("http://") || http1Hosts.contains(key))
        return http1 ? min(perHost, perHTTP1Host) : perHost
    }

    /// The host is held now (it said "later").
    func isHeld(_ key: String, now: UInt64) -> Bool {
        (paces[key]?.heldUntil ?? 0) > now
    }

    /// Takes a slot at once, or puts the request in its host's line (its continuation is
    /// resumed by the caller, outside the lock, when the answer is `now`).
    mutating func admit(_ host: String, first: Bool, _ continuation: Waiter) -> Admission {
        if let failure = paces[host]?.exhausted
            ?? holdsStopped.flatMap({ isHeld(host, now: DispatchTime.now().uptimeNanoseconds) ? $0 : nil }) {
            return .now(failure)
        }
        // Taken out while it changes, so that its line is changed in place, not copied
        // (a line a thousand long was copied for each request put in it and each taken out).
        var entry = hosts.removeValue(forKey: host) ?? RequestLimiter.Host(http1: host.hasPrefix("http://") || http1Hosts.contains(host))
        if entry.waitingCount == 0 && entry.paced < cap(entry, host) && inFlight < window
            && !isHeld(host, now: DispatchTime.now().uptimeNanoseconds) {
            entry.inFlight += 1
            inFlight += 1
            hosts[host] = entry
            return .now(nil)
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
        return .queued
    }

    /// Gives a slot back; returns the waiting requests that take the free slots.
    mutating func release(_ host: String, overdue: Bool) -> [Waiter] {
        hosts[host]?.inFlight -= 1
        if overdue { hosts[host]?.overdue -= 1 }
        inFlight -= 1
        let granted = grant()
        if let entry = hosts[host], entry.inFlight == 0, entry.waitingCount == 0 { hosts[host] = nil }
        return granted
    }

    /// Hands free slots to waiting requests, a host at a time by turns; returns them, to
    /// be resumed outside the lock.
    mutating func grant() -> [Waiter] {
        var granted: [Waiter] = []
        var looked = 0
        let now = paces.isEmpty ? 0 : DispatchTime.now().uptimeNanoseconds
        while inFlight < window, !turns.isEmpty, looked < turns.count {
            let host = turns.removeFirst()
            // Taken out while it changes (its line changed in place, as in `admit`).
            guard var entry = hosts.removeValue(forKey: host) else { continue }
            guard entry.waitingCount > 0 else {
                hosts[host] = entry
                continue
            }
            guard entry.paced < cap(entry, host), !isHeld(host, now: now) else {
                // At its own cap, or held: its turn passes, it stays in line.
                hosts[host] = entry
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
public final class RequestSlot: Sendable {
    public let limiter: RequestLimiter
    public let host: String
    /// Whether the slot is held; which of its requests was sent last; whether that one is
    /// out past the limiter's patience (counted apart from its host's pace).
    private struct Held {
        var held = false
        var sent = 0
        var alone = false
        var overdue = false
    }
    private let state = Mutex(Held())

    public init(_ limiter: RequestLimiter, for urlString: String) {
        self.limiter = limiter
        self.host = RequestLimiter.host(of: urlString)
    }

    /// Takes a slot (none is taken twice); `first`: ahead of the host's other requests.
    /// Returns nil with the slot taken, or, taking none, the failure of a host whose limits
    /// went past `--max-host-wait`.
    @discardableResult
    public func acquire(first: Bool = false) async -> SourceFailure? {
        guard !isHeld else { return nil }
        if let failure = await limiter.acquire(host, first: first) { return failure }
        state.withLock { $0.held = true }
        return nil
    }

    /// Its request is being sent (`RequestLimiter.sent`): true when it goes alone after a
    /// hold (the probe). To a paced host, once out past the limiter's patience it stops
    /// counting against that pace: a slow answer is not a refusal.
    @discardableResult
    public func sent() -> Bool {
        let (alone, paced) = limiter.sending(host)
        guard paced else { return alone }
        let request = state.withLock { held -> Int in
            held.sent += 1
            held.alone = alone
            return held.sent
        }
        Task { [weak self, patience = limiter.probePatience] in
            try? await Task.sleep(nanoseconds: UInt64(patience * 1e9))
            self?.outPastPatience(request)
        }
        return alone
    }

    private func outPastPatience(_ request: Int) {
        let probe = state.withLock { held -> Bool? in
            guard held.held, held.sent == request, !held.overdue else { return nil }
            held.overdue = true
            return held.alone
        }
        if let probe { limiter.overdue(host, probe: probe) }
    }

    /// Gives the slot back, if held.
    public func release() {
        let (was, overdue) = state.withLock { held -> (Bool, Bool) in
            defer {
                held.held = false
                held.overdue = false
                held.sent += 1
            }
            return (held.held, held.overdue)
        }
        if was { limiter.release(host, overdue: overdue) }
    }

    private var isHeld: Bool {
        state.withLock { $0.held }
    }
}

// MARK: A host's pace

extension RequestLimiter {
    /// A request to `host` is being sent (for the report). Returns true when it goes alone
    /// after a hold the host named (the probe): a refusal of it is its own, not its host's.
    @discardableResult
    public func sent(_ host: String) -> Bool {
        sending(host).alone
    }

    /// `sent`, and whether the host is paced now (held after refusals, or below its cap):
    /// a request to it out past `probePatience` stops counting against that pace, and a
    /// probe out that long opens the host's line (`RequestSlot.sent`, `overdue`).
    func sending(_ host: String) -> (alone: Bool, paced: Bool) {
        state.withLock { state in
            let now = DispatchTime.now().uptimeNanoseconds
            var pace = state.paces[host] ?? HostPace()
            pace.requests += 1
            if pace.firstRequest == nil { pace.firstRequest = now }
            let alone = pace.probing && (state.hosts[host]?.inFlight ?? 0) <= 1
            let paced = pace.probing || pace.allowance != nil
            state.paces[host] = pace
            state.forgetQuietHosts()
            return (alone, paced)
        }
    }

    /// A request to `host` has been out past `probePatience` unanswered (`RequestSlot.sent`):
    /// slow, not refused. It no longer counts against the host's pace, so another may go
    /// beside it; a probe (`probe`) opens the host's line, its pace grown as for an answer.
    func overdue(_ host: String, probe: Bool) {
        let granted = state.withLock { state -> [Waiter] in
            guard state.hosts[host] != nil else { return [] }
            state.hosts[host]?.overdue += 1
            if probe, var pace = state.paces[host], pace.probing, pace.heldUntil <= DispatchTime.now().uptimeNanoseconds {
                pace.probing = false
                _ = pace.grow(toward: state.ownCap(host))
                state.paces[host] = pace
            }
            return state.grant()
        }
        for continuation in granted { continuation.resume(returning: nil) }
    }

    /// `host` answered a request other than by a refusal: its requests at once grow by one
    /// an answer (doubling each round trip, as TCP's slow start), back to its cap.
    public func answered(_ host: String) {
        let granted = state.withLock { state -> [Waiter] in
            var pace = state.paces[host] ?? HostPace()
            let now = DispatchTime.now().uptimeNanoseconds
            pace.answered += 1
            pace.refusalsInARow = 0
            pace.probeRefusalsInARow = 0
            pace.recent.answered()
            pace.lastAnswer = now
            // An answer that itself held the host (its rate limit spent) leaves the probe for after the hold.
            var opened = pace.probing && pace.heldUntil <= now
            if opened { pace.probing = false }
            if pace.grow(toward: state.ownCap(host)) { opened = true }
            state.paces[host] = pace
            return opened ? state.grant() : []
        }
        for continuation in granted { continuation.resume(returning: nil) }
    }

    /// What a refusal (429, or 503 naming a time) means for the request it refused.
    public enum Refusal: Sendable, Equatable {
        /// The host is refusing: it is held for the time it named, its whole line with it,
        /// and the request waits first in that line, spending none of its retries.
        case hostHeld
        /// The refusal is the photo's own (the host answers its other photos): the request
        /// spends one of its retries and waits by itself; nothing else waits for it.
        case own
        /// The host's holds went past `--max-host-wait`: the request fails so.
        case outOfBudget(SourceFailure)
    }

    /// `host` refused a request with `status` (429, 503). `wait`: how long to hold the host
    /// if the refusal is its own (nil: not at all, the request's own retry waits); `named`:
    /// the host named that time (else it is our backoff). Whose refusal it is:
    /// - the photo's own when the request was already refused as its own (`own`); when the
    ///   host answers nearly all of its other requests (under one in ten of its recent
    ///   answers refusals, over at least eight); or when the request, refused before
    ///   (`refusedBefore`), went alone after the hold the host named (`alone`: the wait was
    ///   kept and the host still refuses this photo; two such in a row, and the host is
    ///   refusing). A host refusing many of its requests (a rate limit) is pacing us: those
    ///   refusals are its own, however often one photo meets them;
    /// - else the host's: its requests at once are halved (once per hold: requests refused
    ///   together are one signal) and, with `wait` (else a backoff, `holdWithoutWait`), it
    ///   is held that long from now. Past `budget` seconds of holds (`--max-host-wait`) it
    ///   and every request waiting for it fail.
    /// A refusal naming no time is always the host's.
    public func refused(_ host: String, status: Int, wait: Double?, named: Bool = true, budget: Double,
                        alone: Bool = false, own: Bool = false, refusedBefore: Bool = false) -> Refusal {
        let hold = state.withLock { state -> State.Hold? in
            let now = DispatchTime.now().uptimeNanoseconds
            var pace = state.paces[host] ?? HostPace()
            pace.refusals[status, default: 0] += 1
            pace.lastAnswer = now
            let isolated = pace.recent.isolated
            pace.recent.refused()
            let refusedAgain = refusedBefore && alone && pace.probeRefusalsInARow < 2
            if pace.exhausted == nil, wait != nil, named, own || isolated || refusedAgain {
                if alone { pace.probeRefusalsInARow += 1 }
                state.paces[host] = pace
                return nil
            }
            pace.refusalsInARow += 1
            if pace.exhausted == nil, pace.heldUntil <= now {
                let current = pace.allowance ?? Double(state.ownCap(host))
                let halved = max(1, (min(current, Double(max(1, state.hosts[host]?.inFlight ?? 1))) / 2).rounded(.down))
                pace.allowance = halved
                pace.lowestAllowance = min(pace.lowestAllowance ?? Int.max, Int(halved))
            }
            state.paces[host] = pace
            return state.hold(host, for: wait, now: now, budget: budget)
        }
        guard let hold else { return .own }
        return carriedOut(hold).map { .outOfBudget($0) } ?? .hostHeld
    }

    /// How long a host that refused without naming a time is held: `backoff` doubled per
    /// refusal in a row, at most a minute.
    public func holdWithoutWait(_ host: String, backoff: Double) -> Double {
        let inARow = state.withLock { max(1, ($0.paces[host]?.refusalsInARow ?? 0) + 1) }
        return min(60, max(0.05, backoff) * pow(2, Double(min(inARow - 1, 10))))
    }

    /// Holds `host` for `wait` seconds from now (it answered, and said nothing is left
    /// until then: a rate limit's reset); see `refused` for the budget.
    public func hold(_ host: String, for wait: Double, budget: Double) -> SourceFailure? {
        let hold = state.withLock { $0.hold(host, for: wait, now: DispatchTime.now().uptimeNanoseconds, budget: budget) }
        return carriedOut(hold)
    }

    /// Does, outside the lock, what a hold decided: fails the line of a host past its
    /// budget, or wakes its line when the hold ends. Returns the request's failure, if any.
    private func carriedOut(_ hold: State.Hold) -> SourceFailure? {
        switch hold {
        case .unchanged(let failure):
            return failure
        case .exhausted(let failure, let line):
            for continuation in line { continuation.resume(returning: failure) }
            return failure
        case .held(let nanoseconds):
            Task { [weak self] in
                try? await Task.sleep(nanoseconds: nanoseconds)
                self?.holdEnded()
            }
            return nil
        }
    }

    /// The run is stopping: the requests waiting for a held host, and any asking for one
    /// later, fail now with `failure` rather than wait out the hold.
    public func stopHolds(_ failure: SourceFailure) {
        let failed = state.withLock { state -> [Waiter] in
            state.holdsStopped = failure
            let now = DispatchTime.now().uptimeNanoseconds
            var held: [String] = []
            for (key, entry) in state.hosts where state.isHeld(key, now: now) && entry.waitingCount > 0 {
                held.append(key)
            }
            var failed: [Waiter] = []
            for key in held { failed += state.takeLine(key) }
            return failed
        }
        for continuation in failed { continuation.resume(returning: failure) }
    }

    /// A hold's time came: its host's line takes the free slots again.
    private func holdEnded() {
        let granted = state.withLock { $0.grant() }
        for continuation in granted { continuation.resume(returning: nil) }
    }

    /// Each host's report: every host its limits slowed, then the busiest, `limit` in all.
    public func hostReports(limit: Int = 100) -> [HostReport] {
        state.withLock { state in
            let ordered = state.paces.sorted {
                ($0.value.wasLimited ? 1 : 0, $0.value.waited, $0.value.requests, $1.key)
                    > ($1.value.wasLimited ? 1 : 0, $1.value.waited, $1.value.requests, $0.key)
            }
            return ordered.prefix(limit).map { $0.value.report(host: $0.key, cap: state.ownCap($0.key)) }
        }
    }

    /// Seconds as a report shows them: "3,600", "2.5".
    static func shown(_ seconds: Double) -> String {
        if seconds >= 100 {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.usesGroupingSeparator = true
            formatter.groupingSeparator = ","
            formatter.maximumFractionDigits = 0
            return formatter.string(from: NSNumber(value: seconds.rounded())) ?? String(Int(seconds))
        }
        return String(format: seconds >= 10 || seconds == seconds.rounded() ? "%.0f" : "%.1f", seconds)
    }
}

extension RequestLimiter.State {
    /// What a hold decided, for the caller to carry out once unlocked (`carriedOut`).
    enum Hold {
        /// Nothing more held; the request's failure if the host's limits were spent before.
        case unchanged(SourceFailure?)
        /// The host's limits went past the budget now: it and its whole line fail so.
        case exhausted(SourceFailure, line: [Waiter])
        /// Held `nanoseconds` from now: its line takes slots again after.
        case held(nanoseconds: UInt64)
    }

    /// Holds `host` for `wait` seconds from `now`, within `budget` (`RequestLimiter.refused`).
    mutating func hold(_ host: String, for wait: Double?, now: UInt64, budget: Double) -> Hold {
        var pace = paces[host] ?? HostPace()
        if let exhausted = pace.exhausted { return .unchanged(exhausted) }
        guard let wait, wait > 0 else { return .unchanged(nil) }
        let until = now + UInt64(min(wait, HostLimitSignal.longest) * 1e9)
        let from = max(now, pace.heldUntil)
        guard until > from else { return .unchanged(nil) }
        let extra = Double(until - from) / 1e9
        if pace.waited + extra > budget {
            let shown = RequestLimiter.shown
            let reason = wait > budget
                ? "the host asked us to wait \(shown(wait)) s; over --max-host-wait \(shown(budget)) s"
                : "the host's limits held it \(shown(pace.waited)) s; \(shown(extra)) s more is over --max-host-wait \(shown(budget)) s"
            let failure = SourceFailure(.rateLimited, reason)
            pace.exhausted = failure
            paces[host] = pace
            // Its line fails now: nothing of it waits for a slot it will never use.
            return .exhausted(failure, line: takeLine(host))
        }
        pace.waited += extra
        pace.heldUntil = until
        pace.probing = true
        paces[host] = pace
        return .held(nanoseconds: until - now)
    }

    /// Empties `key`'s line (the host forgotten if nothing of it is in flight) and returns
    /// the requests that waited in it, to be failed.
    mutating func takeLine(_ key: String) -> [Waiter] {
        guard var entry = hosts.removeValue(forKey: key) else { return [] }
        let line = Array(entry.waiting[entry.head...])
        entry.waiting = []
        entry.head = 0
        if entry.inFlight > 0 { hosts[key] = entry }
        turns.removeAll { $0 == key }
        return line
    }

    /// Past 10,000 hosts, those whose pace said nothing (no refusal, no hold) and that
    /// hold nothing now are forgotten: the report's lines are bounded with the hosts.
    mutating func forgetQuietHosts() {
        guard paces.count > forgetPast else { return }
        paces = paces.filter { $0.value.wasLimited || hosts[$0.key] != nil }
        forgetPast = max(10_000, paces.count * 2)
    }
}
