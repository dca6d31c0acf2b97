/// Limits on one download. Every one has a default and a CLI flag.
public struct FetchLimits: Sendable {
    /// Largest body accepted, in bytes; the stream is cut at this size whatever
    /// Content-Length says. Default 20 MB.
    public var maxBytes: Int = 20_000_000
    /// Whole request, connect to last byte, in seconds. Default 30.
    public var timeout: Double = 30
    /// Connect timeout in seconds. Default 10 (never more than `timeout`).
    public var connectTimeout: Double = 10
    /// Redirects followed before giving up. Default 5.
    public var maxRedirects: Int = 5
    /// Retries after a timeout, a network error, 408 or 5xx, or a refusal (`429`, or `503`
    /// naming a time) that is the photo's own; a refusal that is the host's holds its line
    /// instead (`maxHostWait`) and spends none (`RequestLimiter.refused`). Default 2.
    public var retries: Int = 2
    /// Longest total wait between attempts of one source, in seconds; a `Retry-After`
    /// asking for more ends the retries. Default 30.
    public var maxRetryWait: Double = 30
    /// Whole source, in seconds: every attempt, redirect and wait between attempts. An
    /// attempt gets what is left when that is less than `timeout`. Default 60.
    public var sourceDeadline: Double = 60
    /// First backoff in seconds, doubled each retry (with jitter). Default 0.5.
    public var retryBackoff: Double = 0.5
    /// Longest a run waits on one host's limits in all, in seconds: its holds after a
    /// `429`/`503` or a rate limit spent (`RequestLimiter`). Past it the host's remaining
    /// photos fail (`rateLimited`), keeping their cached copies. Default 600.
    public var maxHostWait: Double = 600

    public init() {}
}
