import AvatarCacheSupport
import Foundation

/// One host's pace over a run, as `RequestLimiter` keeps it: until when the host is held
/// (it said "later"), the wait its limits have cost so far against `--max-host-wait`, the
/// requests it takes at once after refusals, and what the report says of it.
///
/// Requests at once after refusals: halved by a refusal (at most once per hold: the
/// requests refused together are one signal), grown back by one an answer, so doubled each
/// round trip once the host stops refusing (as TCP's slow start after a loss), until the
/// host's own cap is reached again. After a hold, one request goes first
/// and the others once it is answered, or once it has been out a second unanswered.
struct HostPace {
    /// Uptime (ns) before which no request goes to the host.
    var heldUntil: UInt64 = 0
    /// Seconds of holds charged against the budget (their union: holds overlap).
    var waited = 0.0
    /// Set once the host's limits are over the budget: every request left fails so.
    var exhausted: SourceFailure?
    /// Requests at once after refusals; nil: the host's own cap.
    var allowance: Double?
    /// After a hold, one request goes alone until it is answered: a limit that lets one
    /// through a second is not met by the whole allowance at once.
    var probing = false
    /// Refusals in a row without an answer between (the backoff of a refusal naming no time).
    var refusalsInARow = 0
    /// Probes refused in a row without an answer between: two, and the host is refusing.
    var probeRefusalsInARow = 0
    /// The host's recent answers and refusals: whether a refusal is a photo's own.
    var recent = RecentAnswers()
    var requests = 0
    var answered = 0
    var refusals: [Int: Int] = [:]
    var lowestAllowance: Int?
    var firstRequest: UInt64?
    var lastAnswer: UInt64?

    /// One more request at once (an answer came, or a probe was out past its patience),
    /// back to `cap` (then nil: the cap itself). True when it was below its cap.
    mutating func grow(toward cap: Int) -> Bool {
        guard let current = allowance else { return false }
        allowance = current + 1 >= Double(cap) ? nil : current + 1
        return true
    }

    /// Something worth a line of the report beyond its request count.
    var wasLimited: Bool { !refusals.isEmpty || waited > 0 || exhausted != nil }

    func report(host: String, cap: Int) -> HostReport {
        let span = firstRequest.flatMap { first in lastAnswer.map { Double($0 &- first) / 1e9 } } ?? 0
        return HostReport(
            host: host, requests: requests, answered: answered,
            refusals: Dictionary(uniqueKeysWithValues: refusals.map { (String($0.key), $0.value) }),
            waitSeconds: (waited * 1000).rounded() / 1000,
            requestsAtOnce: allowance.map { min(cap, Int($0)) } ?? cap,
            lowestRequestsAtOnce: lowestAllowance,
            answersPerSecond: span > 0 && answered > 1 ? (Double(answered - 1) / span * 100).rounded() / 100 : nil,
            outOfBudget: exhausted?.reason
        )
    }
}

/// A host's recent answers and refusals, each counted with a weight that falls by 1/32 at
/// every later one: about the last few dozen count.
struct RecentAnswers {
    private(set) var answers = 0.0
    private(set) var refusals = 0.0

    mutating func answered() { decay(); answers += 1 }
    mutating func refused() { decay(); refusals += 1 }

    /// The host answers nearly everything: at least eight answers' worth, under one in ten
    /// of them refusals. A refusal now is the photo's own.
    var isolated: Bool { answers + refusals >= 8 && refusals < 0.1 * (answers + refusals) }

    private mutating func decay() {
        answers *= 31.0 / 32.0
        refusals *= 31.0 / 32.0
    }
}

/// What the run report says of one host (its requests' scheme, host and port).
public struct HostReport: Codable, Sendable, Equatable {
    public var host: String
    /// Requests sent (every attempt; redirects count with the first).
    public var requests: Int
    /// Requests answered other than by a refusal (a photo, a 304, a 404…).
    public var answered: Int
    /// Refusals (429, 503) by status.
    public var refusals: [String: Int]
    /// Seconds its limits held its requests in all (against `--max-host-wait`).
    public var waitSeconds: Double
    /// The requests it took at once at the end (its pace after refusals; its cap without any).
    public var requestsAtOnce: Int
    /// The fewest requests at once its refusals brought it to; nil: never lowered.
    public var lowestRequestsAtOnce: Int?
    /// Answers a second, first request to last answer; nil under two answers.
    public var answersPerSecond: Double?
    /// Why its remaining photos failed: its limits over `--max-host-wait`.
    public var outOfBudget: String?

    public var refusalCount: Int { refusals.values.reduce(0, +) }

    /// "429 ×11, 503 ×2".
    public var refusalsText: String {
        refusals.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}
