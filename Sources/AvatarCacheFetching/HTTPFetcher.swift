import AvatarCacheModel
import AvatarCacheSupport
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import Synchronization

/// Downloads photos over HTTP(S) with async-http-client.
///
/// fetch flow: check URL (scheme) -> check resolved addresses (private networks) ->
/// GET -> on 3xx, check the Location the same way and follow, at most `maxRedirects`
/// -> stream the body with a byte cap, hashing as it arrives.
///
/// Redirects are followed here rather than by the client so that each target passes
/// the same checks as the first URL. Each hop connects to an address its check returned
/// (a client pinned to it with async-http-client's `dnsOverride`, which keeps the host
/// name for TLS: SNI and the certificate), never to a second resolution of the name.
public final class HTTPFetcher: Sendable {
    let client: HTTPClient
    let configuration: HTTPClient.Configuration
    /// "host address #n" -> a client that connects to that address for that host, the
    /// host's connection n (`ConnectionSpread`); "* #n": connection n of the hosts not pinned.
    let pinned = Mutex<[String: HTTPClient]>([:])
    /// Which connection to its host each request goes over.
    let spread: ConnectionSpread
    let policy: NetworkPolicy
    let limits: FetchLimits
    let logger: Logger
    /// Where each HTTP hop is told at trace level (URL without query or credentials,
    /// status, whether the token went, never a header's value); nil: nowhere.
    let trace: Logger?
    static let userAgent = "avatar-cache/\(AvatarCacheVersion.string)"

    /// `caFile`: PEM certificates of an operator's own authority (an intranet photo
    /// server's), trusted beside the system's roots. `maxConnectionsPerHost`: an HTTP/1.1
    /// host's connections, and an HTTP/2 host's once `streamsPerConnection` requests are in
    /// flight over each of them (`ConnectionSpread`).
    public init(policy: NetworkPolicy, limits: FetchLimits, maxConnectionsPerHost: Int, streamsPerConnection: Int = 100,
                caFile: String? = nil, trace: Logger? = nil) {
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        configuration.tlsConfiguration = tls
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        let connect = min(limits.connectTimeout, limits.timeout)
        configuration.timeout = .init(connect: .milliseconds(Int64(connect * 1000)), read: .milliseconds(Int64(limits.timeout * 1000)))
        configuration.connectionPool = .init(
            idleTimeout: .seconds(30),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maxConnectionsPerHost)
        )
        // A connection that cannot be made fails the attempt at once: `fetch` decides
        // what is retried (bounded, with backoff) and what is final (TLS), rather than the
        // client trying again until the deadline (19 TLS handshakes in one 5 s attempt).
        configuration.connectionPool.retryConnectionEstablishment = false
        self.configuration = configuration
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.policy = policy
        self.limits = limits
        self.spread = ConnectionSpread(streamsPerConnection: streamsPerConnection, maxConnections: maxConnectionsPerHost)
        // The client's own logs could carry request headers (the token): it gets none.
        self.logger = Logger(label: "avatar-cache.http", factory: { _ in SwiftLogNoOpLogHandler() })
        self.trace = trace.flatMap { $0.logLevel <= .trace ? $0 : nil }
    }

    /// A URL as a trace line shows it: no user-info, no query or fragment (signed URLs
    /// carry their signature there), cut when long.
    static func traced(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let hadQuery = components?.query != nil
        components?.user = nil
        components?.password = nil
        components?.query = nil
        components?.fragment = nil
        return abbreviated((components?.string ?? "?") + (hadQuery ? "?…" : ""), limit: ShownText.maxURLCharacters)
    }

    /// Shuts the clients down; call once, when no fetch is running.
    public func shutdown() async {
        try? await client.shutdown()
        for pinnedClient in pinned.withLock({ Array($0.values) }) { try? await pinnedClient.shutdown() }
    }

    /// The client that connects `url`'s host to `address` (one of the addresses its check
    /// returned) as the host's connection `connection`, made once per host, address and
    /// connection; where the check gave nothing to pin to (an address in the URL, a host
    /// allowed by name), the shared one for connection 0 and one per connection after it.
    func client(for url: URL, pinnedTo checked: NetworkPolicy.Address?, connection: Int = 0) -> HTTPClient {
        let pin = url.host.flatMap { host in checked.map { (host, $0.text) } }
        guard pin != nil || connection > 0 else { return client }
        return pinned.withLock { clients in
            let key = (pin.map { "\($0.0) \($0.1)" } ?? "*") + " #\(connection)"
            if let existing = clients[key] { return existing }
            var configuration = self.configuration
            if let pin { configuration.dnsOverride = [pin.0: pin.1] }
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = made
            return made
        }
    }

    /// Fetches one photo, throwing a classified `SourceFailure`. Retries timeouts,
    /// network errors, 408, 429 and 5xx with exponential backoff, honouring
    /// `Retry-After`, at most `retries` times and `maxRetryWait` seconds of waiting, all
    /// within `sourceDeadline` seconds. `credential`: the Monica token, attached only on hops to its host.
    /// `validators`: make the request conditional; a 304 gives `.notModified`.
    /// `sized`: told a photo's `Content-Length` before its body is read (each attempt's).
    /// `slot`: the request's slot of the requests in flight, held by the caller; given back
    /// while waiting to try again (a `Retry-After` holds none) and taken again after.
    ///
    /// With a slot, the host's pace is its own (`RequestLimiter`): a `429`, or a `503` naming
    /// a time (`HostLimitSignal`), is either the host's or the photo's own
    /// (`RequestLimiter.refused`). The host's holds its whole line until then, this request
    /// first in it when it goes on: no retry spent, the wait not counted in `sourceDeadline`,
    /// all of the host's waits bounded by `maxHostWait`. The photo's own (the host answers
    /// its other photos) spends one of its retries and waits alone, within `maxRetryWait`
    /// and `sourceDeadline`: a URL refused every time fails in seconds, the refusal as its
    /// reason. An answer saying its rate limit is spent holds the line before the next request.
    public func fetch(_ urlString: String, credential: MonicaCredential? = nil, validators: Validators? = nil,
                      slot: RequestSlot? = nil, sized: (@Sendable (Int) async -> Void)? = nil) async throws -> FetchResult {
        var waited = 0.0
        var attempt = 0
        var ownRefusals = 0
        var refusedBefore = false
        var started = DispatchTime.now().uptimeNanoseconds
        func remaining() -> Double { limits.sourceDeadline - Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        while true {
            var alone = false
            do {
                let left = remaining()
                let timeout = min(limits.timeout, left)
                let reason = left < limits.timeout
                    ? "no complete answer within the source deadline of \(limits.sourceDeadline) s (\(attempt + 1) attempts)"
                    : "no complete answer within \(limits.timeout) s"
                if let slot { alone = slot.sent() }
                let result = try await fetchOnce(urlString, credential: credential, validators: validators, slot: slot, sized: sized,
                                                 timeout: timeout, timeoutReason: reason)
                if let slot { slot.limiter.answered(slot.host) }
                return result
            } catch let failure as Retryable {
                var refusedAsOwn = false
                if let slot, let status = failure.status {
                    if status == 429 || status == 503 {
                        // The host said "later": with a time (or a 429), its whole line waits,
                        // unless the refusal is this photo's own.
                        let holdsHost = status == 429 || failure.signal != nil
                        let named = failure.signal?.wait
                        let wait = holdsHost ? named ?? slot.limiter.holdWithoutWait(slot.host, backoff: limits.retryBackoff) : nil
                        let refusal = slot.limiter.refused(slot.host, status: status, wait: wait, named: named != nil, budget: limits.maxHostWait,
                                                           alone: alone, own: ownRefusals > 0, refusedBefore: refusedBefore)
                        refusedBefore = true
                        switch refusal {
                        case .outOfBudget(let failure):
                            throw failure
                        case .own:
                            ownRefusals += 1
                            refusedAsOwn = true
                        case .hostHeld where holdsHost:
                            let paused = DispatchTime.now().uptimeNanoseconds
                            slot.release()
                            if let outOfBudget = await slot.acquire(first: true) { throw outOfBudget }
                            guard !Task.isCancelled else { throw failure.failure }
                            started += DispatchTime.now().uptimeNanoseconds - paused
                            continue
                        case .hostHeld:
                            break
                        }
                    } else {
                        slot.limiter.answered(slot.host)
                    }
                }
                attempt += 1
                let backoff = limits.retryBackoff * pow(2, Double(attempt - 1)) * Double.random(in: 0.8...1.2)
                let delay = failure.retryAfter ?? (refusedAsOwn ? failure.signal?.wait : nil) ?? backoff
                // Another attempt only if it would have a moment after the wait.
                guard attempt <= limits.retries, waited + delay <= limits.maxRetryWait, delay + 0.1 < remaining(), !Task.isCancelled else {
                    throw refusedAsOwn ? ownRefusal(failure.failure, attempts: attempt, refusals: ownRefusals, wait: delay, waited: waited)
                                       : failure.failure
                }
                waited += delay
                slot?.release()
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                if let outOfBudget = await slot?.acquire(first: true) { throw outOfBudget }
            } catch let failure as SourceFailure {
                // Answered, but not with the photo (a 404, a body too large).
                if let slot { slot.limiter.answered(slot.host) }
                throw failure
            }
        }
    }

    /// A photo its host refused as its own (`RequestLimiter.Refusal.own`) and will not get:
    /// the refusal in words, and why no attempt is left.
    func ownRefusal(_ refusal: SourceFailure, attempts: Int, refusals: Int, wait: Double, waited: Double) -> SourceFailure {
        let shown = RequestLimiter.shown
        let why: String
        if attempts > limits.retries {
            why = "refused \(refusals) of its \(attempts) attempts while its host answered other photos"
        } else if waited + wait > limits.maxRetryWait {
            why = "the host asked this photo to wait \(shown(wait)) s more; over --max-retry-wait \(shown(limits.maxRetryWait)) s"
        } else {
            why = "the host asked this photo to wait \(shown(wait)) s; past its --source-deadline \(shown(limits.sourceDeadline)) s"
        }
        return SourceFailure(.rateLimited, "\(refusal.reason): \(why)")
    }

    /// Sends `request` over a connection to the first checked address that takes one: an
    /// address that refuses or cannot be reached (a dead IPv6 route, say) passes to the
    /// next, as the client's own resolution would have (at most four are tried).
    private func execute(_ request: HTTPClientRequest, url: URL, connectingTo addresses: [NetworkPolicy.Address],
                         connection: Int, deadline: NIODeadline) async throws -> HTTPClientResponse {
        let candidates: [NetworkPolicy.Address?] = addresses.isEmpty ? [nil] : Array(addresses.prefix(4))
        for address in candidates.dropLast() {
            do {
                return try await client(for: url, pinnedTo: address, connection: connection).execute(request, deadline: deadline, logger: logger)
            } catch where Self.isConnectFailure(error) {
                continue
            }
        }
        return try await client(for: url, pinnedTo: candidates.last!, connection: connection).execute(request, deadline: deadline, logger: logger)
    }

    /// Requests sent again because the server never processed them (its connection
    /// rotated), over the fetcher's life: for the run's report.
    private let resent = Atomic<Int>(0)
    public var requestsResent: Int { resent.load(ordering: .relaxed) }

    /// How many times a request that failed so is sent again on a new connection in one
    /// attempt (all within its deadline); 0 when the server may have processed it. The
    /// server did not process it when it refused an HTTP/2 stream (REFUSED_STREAM) or
    /// cancelled it as its connection closed (a GOAWAY naming an earlier stream as its
    /// last), or the client dropped it from a closing connection's queue: up to 64 times
    /// (a busy rotating server). A stream asked of a connection already closed: 8. A
    /// connection closed before any answer began: twice (a server that accepts and closes
    /// every connection is a failure soon, not 64 handshakes). A GET may be sent again in
    /// each case.
    static func resends(for error: Error) -> Int {
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            return closed.errorCode == .refusedStream || closed.errorCode == .cancel ? 64 : 0
        }
        if error is NIOHTTP2Errors.CreatedStreamAfterGoaway { return 64 }
        if let client = error as? HTTPClientError {
            // `cancelled` while this task is not (ours, cancelled by a deadline, is not resent).
            if client == .cancelled { return Task.isCancelled ? 0 : 64 }
            return client == .remoteConnectionClosed ? 2 : 0
        }
        if let channel = error as? ChannelError {
            switch channel {
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed: return 8
            default: return 0
            }
        }
        return 0
    }

    /// The server did not process the request (`resends(for:)`).
    static func wasNotProcessed(_ error: Error) -> Bool { resends(for: error) > 0 }

    /// No connection could be made to that address (nothing was sent).
    static func isConnectFailure(_ error: Error) -> Bool {
        if let io = error as? IOError { return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL].contains(io.errnoCode) }
        if let client = error as? HTTPClientError { return client == .connectTimeout }
        if let channel = error as? ChannelError, case .connectTimeout = channel { return true }
        return false
    }

    /// A failure worth another attempt, with the server's `Retry-After` when it sent one;
    /// for an answer, its status and the wait its headers name (`HostLimitSignal`).
    struct Retryable: Error {
        var failure: SourceFailure
        var retryAfter: Double?
        var status: Int?
        var signal: HostLimitSignal?
    }

    /// One attempt, bounded as a whole by `timeout`: connect, every redirect and the
    /// whole body. The client's own read timeout only notices silence, so a server that
    /// sends one byte a second would otherwise hold the attempt forever.
    private func fetchOnce(_ urlString: String, credential: MonicaCredential?, validators: Validators?, slot: RequestSlot?,
                           sized: (@Sendable (Int) async -> Void)?, timeout: Double, timeoutReason: String) async throws -> FetchResult {
        return try await withThrowingTaskGroup(of: FetchResult.self) { group in
            group.addTask {
                try await self.attempt(urlString, credential: credential, validators: validators, slot: slot, sized: sized, timeout: timeout)
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(timeout, 0) * 1e9))
                throw Retryable(failure: SourceFailure(.timeout, timeoutReason))
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw CancellationError() }
            return result
        }
    }

    private func attempt(_ urlString: String, credential: MonicaCredential?, validators: Validators?, slot: RequestSlot?,
                         sized: (@Sendable (Int) async -> Void)?, timeout: Double) async throws -> FetchResult {
        var url = try policy.checkedURL(urlString)
        let deadline = NIODeadline.now() + .milliseconds(Int64(max(timeout, 0) * 1000))
        var redirects = 0
        while true {
            let addresses = try await policy.checkAddresses(of: url)
            // Its connection to the host, for this hop until its body is read.
            let hostKey = RequestLimiter.host(of: url.absoluteString)
            let connection = spread.lease(hostKey, mayOpen: slot?.limiter.mayOpenConnection(hostKey) ?? false,
                                          demand: slot?.limiter.demand(hostKey) ?? 1)
            defer { spread.release(hostKey, connection) }
            var answer: HTTPClientResponse?
            // A request the server never processed (its connection rotated: a stream refused
            // or cancelled by GOAWAY, a keep-alive connection closed before the answer began)
            // is sent again at once on a new connection: not an attempt, not a failure.
            var resends = 0
            while answer == nil {
                do {
                    answer = try await execute(request(for: url, credential: credential, validators: validators),
                                                 url: url, connectingTo: addresses, connection: connection, deadline: deadline)
                } catch where resends < Self.resends(for: error) && NIODeadline.now() < deadline {
                    resends += 1
                    resent.wrappingAdd(1, ordering: .relaxed)
                } catch {
                    throw Self.transportFailure(error)
                }
            }
            let response = answer!
            let status = response.status.code
            // An HTTP/1.x host takes as many requests at once as its connections.
            if redirects == 0, response.version.major == 1, let slot { slot.limiter.answeredOverHTTP1(slot.host) }
            trace?.trace("http hop", metadata: [
                "url": "\(Self.traced(url))", "status": "\(status)", "redirects": "\(redirects)",
                "token": "\(credential?.matches(url) == true ? "sent (not shown)" : "none")",
                "conditional": "\(validators != nil)",
                "contentLength": "\(response.headers.first(name: "Content-Length") ?? "none")",
            ])
            if let slot, status == 200 || status == 304, let spent = HostLimitSignal.read(response.headers, retryAfter: false) {
                // Its rate limit is spent: the next request waits for its reset (this one is answered).
                _ = slot.limiter.hold(slot.host, for: spent.wait, budget: limits.maxHostWait)
            }
            if status == 304, validators != nil {
                try? await Self.drain(response)
                return .notModified(
                    freshnessLifetime: Self.freshnessLifetime(response.headers),
                    etag: response.headers.first(name: "ETag"),
                    lastModified: response.headers.first(name: "Last-Modified")
                )
            }
            if let next = try await redirect(response, from: url, redirects: &redirects) {
                url = next
                continue
            }
            guard status == 200 else {
                try? await Self.drain(response)
                throw Self.statusFailure(response)
            }
            return .fetched(try await body(of: response, sized: sized))
        }
    }

    /// The GET for `url`: the token only for its host, the validators of a conditional request.
    private func request(for url: URL, credential: MonicaCredential?, validators: Validators?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: Self.userAgent)
        if let credential, credential.matches(url) {
            request.headers.add(name: "Authorization", value: "Bearer \(credential.token)")
        }
        if let etag = validators?.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = validators?.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        request.headers.add(name: "Accept", value: "image/jpeg, image/png, image/webp, image/gif, image/heic, image/avif;q=0.9, */*;q=0.1")
        return request
    }

    /// Where a redirect leads, checked by the policy (nil when `response` is none); counts it.
    private func redirect(_ response: HTTPClientResponse, from url: URL, redirects: inout Int) async throws -> URL? {
        guard (300..<400).contains(response.status.code), let location = response.headers.first(name: "Location") else { return nil }
        try? await Self.drain(response)
        redirects += 1
        guard redirects <= limits.maxRedirects else {
            throw SourceFailure(.httpStatus, "more than \(limits.maxRedirects) redirects")
        }
        guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw SourceFailure(.invalidURL, "redirect to an invalid Location")
        }
        return try policy.checkedURL(next.absoluteString)
    }

    /// A status other than 200: retried after a 408, 429 or 5xx (when the server says).
    private static func statusFailure(_ response: HTTPClientResponse) -> Error {
        let status = response.status.code
        let failure = failure(forStatus: response.status)
        if status == 408 || status == 429 || (500..<600).contains(status) {
            return Retryable(failure: failure, retryAfter: retryAfter(response.headers), status: Int(status),
                             signal: HostLimitSignal.read(response.headers))
        }
        return failure
    }

    /// A 200's body, within the size limit, hashed as it arrives.
    private func body(of response: HTTPClientResponse, sized: (@Sendable (Int) async -> Void)?) async throws -> FetchedPhoto {
        let declared = response.headers.first(name: "Content-Length").flatMap(Int.init)
        if let declared, declared > limits.maxBytes {
            throw SourceFailure(.tooLarge, "Content-Length \(declared) bytes exceeds the limit of \(limits.maxBytes)")
        }
        var body: [UInt8] = []
        // The declared size (already within the limit) up front: no doubling copies.
        if let declared, declared > 0 {
            body.reserveCapacity(declared)
            await sized?(declared)
        }
        var hasher = SHA256()
        do {
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= limits.maxBytes else {
                    throw SourceFailure(.tooLarge, "body exceeds the limit of \(limits.maxBytes) bytes")
                }
                chunk.withUnsafeReadableBytes { raw in
                    hasher.update(bufferPointer: raw)
                    body.append(contentsOf: raw)
                }
            }
        } catch let failure as SourceFailure {
            throw failure
        } catch {
            throw Self.transportFailure(error)
        }
        return FetchedPhoto(
            bytes: body,
            sha256: Digests.hex(hasher.finalize()),
            etag: response.headers.first(name: "ETag"),
            lastModified: response.headers.first(name: "Last-Modified"),
            freshnessLifetime: Self.freshnessLifetime(response.headers)
        )
    }

    /// A failure of the connection or the transfer: a timeout or network error is retried;
    /// a TLS failure (an https:// URL on a plain HTTP port, a bad certificate) fails the
    /// same way every time: final for the source.
    private static func transportFailure(_ error: Error) -> Error {
        let failure = classify(error)
        let final = isTLSFailure(error)
        return !final && (failure.failureClass == .timeout || failure.failureClass == .network) ? Retryable(failure: failure) : failure
    }

    /// `Cache-Control: max-age` (no-cache and no-store: 0), else `Expires` − `Date`.
    static func freshnessLifetime(_ headers: HTTPHeaders) -> TimeInterval? {
        let directives = headers[canonicalForm: "Cache-Control"].map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return 0 }
        for directive in directives where directive.hasPrefix("max-age=") {
            if let seconds = Double(directive.dropFirst("max-age=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))) {
                return max(0, seconds)
            }
        }
        if let expires = headers.first(name: "Expires").flatMap(HTTPDate.parse) {
            let now = headers.first(name: "Date").flatMap(HTTPDate.parse) ?? Date()
            return max(0, expires.timeIntervalSince(now))
        }
        return nil
    }

    /// `Retry-After` in seconds: a number, or an HTTP date.
    static func retryAfter(_ headers: HTTPHeaders) -> Double? {
        guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value) { return max(0, seconds) }
        return HTTPDate.parse(value).map { max(0, $0.timeIntervalSinceNow) }
    }

    static func failure(forStatus status: HTTPResponseStatus) -> SourceFailure {
        let text = "HTTP \(status.code) \(status.reasonPhrase)"
        switch status.code {
        case 401, 403: return SourceFailure(.unauthorized, text)
        case 404, 410: return SourceFailure(.notFound, text)
        default: return SourceFailure(.httpStatus, text)
        }
    }

    /// TLS could not be set up with the server: nothing a retry changes.
    static func isTLSFailure(_ error: Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError
    }

    package static func classify(_ error: Error) -> SourceFailure {
        if let failure = error as? SourceFailure { return failure }
        if isTLSFailure(error) { return SourceFailure(.network, words(forTLS: error)) }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return SourceFailure(.timeout, "timed out connecting to the server")
            case .readTimeout: return SourceFailure(.timeout, "timed out: the server sent nothing for the whole --timeout")
            case .deadlineExceeded, .writeTimeout: return SourceFailure(.timeout, "timed out: no complete answer in time")
            case .invalidURL: return SourceFailure(.invalidURL, "not a URL that can be fetched")
            case .emptyHost: return SourceFailure(.invalidURL, "the URL names no host")
            case .emptyScheme: return SourceFailure(.invalidURL, "the URL names no scheme")
            default: return SourceFailure(.network, words(for: error))
            }
        }
        if error is CancellationError { return SourceFailure(.timeout, "cancelled") }
        // Timeouts by their type, never by their text.
        if let channel = error as? ChannelError, case .connectTimeout = channel {
            return SourceFailure(.timeout, "timed out connecting to the server")
        }
        if let io = error as? IOError, io.errnoCode == ETIMEDOUT {
            return SourceFailure(.timeout, "timed out connecting to the server")
        }
        return SourceFailure(.network, words(for: error))
    }

    /// What went wrong, in words a person reads, never a library type's dump: the
    /// server's connection and HTTP/2 stream errors, the system's socket errors.
    static func words(for error: Error) -> String {
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            switch closed.errorCode {
            case .refusedStream: return "the server refused the request (HTTP/2 REFUSED_STREAM) again and again"
            case .cancel: return "the server closed the connection before answering (HTTP/2 GOAWAY) again and again"
            default: return "the server reset the request (HTTP/2 error \(closed.errorCode.networkCode))"
            }
        }
        if error is NIOHTTP2Errors.CreatedStreamAfterGoaway {
            return "the server closed the connection before answering (HTTP/2 GOAWAY) again and again"
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .remoteConnectionClosed: return "the server closed the connection before answering"
            case .cancelled: return "the request was dropped when its connection closed"
            case .bodyLengthMismatch: return "the body was not as long as its Content-Length said"
            case .httpProxyHandshakeTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout: return "timed out setting up the connection"
            default:
                // "HTTPClientError.someCase" read as "some case".
                let name = "\(client)".split(separator: ".").last.map(String.init) ?? "\(client)"
                return "HTTP client: " + name.reduce(into: "") { text, character in
                    if character.isUppercase, !text.isEmpty { text += " " }
                    text += character.lowercased()
                }
            }
        }
        if let channel = error as? ChannelError {
            switch channel {
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed:
                return "the server closed the connection before answering"
            default: return "the connection failed (\(channel))"
            }
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return "the server refused the connection (nothing listens on that port)"
            case ECONNRESET: return "the server reset the connection"
            case EHOSTUNREACH, ENETUNREACH: return "no route to the server's address"
            case EPIPE: return "the server closed the connection while the request was sent"
            default: return "the connection failed: \(String(cString: strerror(io.errnoCode)))"
            }
        }
        return String(describing: error)
    }

    /// A TLS failure in words: a certificate this machine does not trust (`--ca-file`
    /// trusts an intranet's own authority), one for another host, a server that does
    /// not speak TLS on that port.
    static func words(forTLS error: Error) -> String {
        let detail = String(describing: error)
        if detail.contains("CERTIFICATE_VERIFY_FAILED") {
            return "TLS certificate not trusted: signed by an authority this machine does not trust (--ca-file trusts an intranet's own)"
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "TLS certificate is for another host name"
        }
        if detail.contains("WRONG_VERSION_NUMBER") || detail.contains("HTTP_REQUEST") {
            return "TLS failed: the server does not speak TLS on that port (an https:// URL on a plain HTTP port?)"
        }
        return "TLS failed: the handshake with the server did not complete"
    }

    private static func drain(_ response: HTTPClientResponse) async throws {
        _ = try await response.body.collect(upTo: 64 * 1024)
    }
}
