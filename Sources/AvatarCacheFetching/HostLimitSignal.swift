import Foundation
import NIOHTTP1

/// What an answer says about its host's pace: how long to leave the host alone, read from
/// `Retry-After` (delta seconds or an HTTP date), the IETF draft's `RateLimit` header
/// (`RateLimit: "default";r=0;t=5`, the earlier `limit=…, remaining=…, reset=…`) or its
/// `RateLimit-Remaining`/`RateLimit-Reset`, and `X-RateLimit-Remaining`/`X-RateLimit-Reset`
/// (delta seconds, or a Unix time as GitHub sends it).
///
/// A rate-limit header names a wait only when nothing is left (remaining 0); `Retry-After`
/// always does. A value that is no number, negative, or a time already past names none
/// (the caller backs off by its own rule); one beyond `longest` is clamped to it, so that a
/// `Retry-After: 99999999999` is a wait over any budget rather than an overflow.
public struct HostLimitSignal: Sendable, Equatable {
    /// Seconds the host asks to be left alone, from the moment of the answer.
    public var wait: Double
    /// Where the wait was read ("Retry-After", "RateLimit", "X-RateLimit-Reset").
    public var header: String

    /// A year: any wait past it is past every budget.
    public static let longest: Double = 365 * 86_400

    /// The wait `headers` name, `Retry-After` first (unless `retryAfter` is false: on an
    /// answer that is no refusal it means nothing); nil when they name none.
    public static func read(_ headers: HTTPHeaders, now: Date = Date(), retryAfter readsRetryAfter: Bool = true) -> HostLimitSignal? {
        if readsRetryAfter, let value = headers.first(name: "Retry-After"), let wait = retryAfter(value, now: now) {
            return HostLimitSignal(wait: wait, header: "Retry-After")
        }
        let rateLimit = headers["RateLimit"]
        if !rateLimit.isEmpty, let wait = rateLimitField(rateLimit.joined(separator: ",")) {
            return HostLimitSignal(wait: wait, header: "RateLimit")
        }
        for prefix in ["RateLimit", "X-RateLimit"] {
            guard let remaining = headers.first(name: "\(prefix)-Remaining").flatMap(number), remaining <= 0,
                  let reset = headers.first(name: "\(prefix)-Reset").flatMap(number),
                  let wait = resetWait(reset, now: now) else { continue }
            return HostLimitSignal(wait: wait, header: "\(prefix)-Reset")
        }
        return nil
    }

    /// The wait header fields (name, value) name (`read(_:now:retryAfter:)`).
    public static func read(_ fields: [(String, String)], now: Date = Date(), retryAfter: Bool = true) -> HostLimitSignal? {
        read(HTTPHeaders(fields), now: now, retryAfter: retryAfter)
    }

    /// `Retry-After`: delta seconds, or an HTTP date; nil when negative, past or unreadable.
    static func retryAfter(_ value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = number(text) { return seconds > 0 ? min(seconds, longest) : nil }
        guard let date = HTTPDate.parse(text) else { return nil }
        let wait = date.timeIntervalSince(now)
        return wait > 0 ? min(wait, longest) : nil
    }

    /// The `RateLimit` field, either form: the wait (`t=`/`reset=`) of an item with nothing
    /// remaining (`r=`/`remaining=`); nil when no item has both or all have some left.
    static func rateLimitField(_ value: String) -> Double? {
        // Items split by commas; an item's parameters by semicolons (structured fields,
        // draft 07 on) or its own commas (`limit=10, remaining=0, reset=5`, earlier drafts).
        var remaining: Double?, reset: Double?
        func settle() -> Double? {
            defer { remaining = nil; reset = nil }
            guard let remaining, remaining <= 0, let reset, reset > 0 else { return nil }
            return min(reset, longest)
        }
        for item in value.split(separator: ",") {
            for parameter in item.split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard pair.count == 2, let figure = number(pair[1]) else { continue }
                switch pair[0] {
                case "r", "remaining": remaining = figure
                case "t", "reset": reset = figure
                default: break
                }
            }
            // A structured-fields item ends at its comma; the earlier form is one item.
            if item.contains(";"), let wait = settle() { return wait }
        }
        return settle()
    }

    /// A reset: delta seconds, or a Unix time (past 1e9: September 2001) as GitHub sends it.
    static func resetWait(_ reset: Double, now: Date) -> Double? {
        let wait = reset > 1e9 ? reset - now.timeIntervalSince1970 : reset
        return wait > 0 ? min(wait, longest) : nil
    }

    /// A plain decimal number, finite; nil for anything else.
    static func number(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }),
              let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }
}
