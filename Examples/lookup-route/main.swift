// Embedding AvatarCacheLookup in a server (docs/embedding.md): an HTTP/1.1 server of
// `GET /avatars/{userID}?size=55&scale=3` on the library alone, with no web framework, so
// that any one can take its handler (`AvatarRoute`). Builds as the `lookup-route` example:
//
//   lookup-route --cache /var/lib/avatar-cache [--host 127.0.0.1] [--port 8080]
//
// It prints "listening on http://HOST:PORT" when ready (port 0: one the system picks), and
// one line on stderr for each request that fails for a reason of the server's own.
import AvatarCacheLookup
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the route answers: a status, headers and a body.
struct RouteResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: [UInt8] = []
}

/// The route's handler: one `CacheLookup` for the process, shared by every request (it is
/// Sendable; each answer is a few indexed reads).
final class AvatarRoute: Sendable {
    let lookup: CacheLookup

    init(cache: URL) throws {
        lookup = try CacheLookup(cache: cache)
    }

    /// `GET /avatars/{userID}?size=55&scale=3`: the file (`Accept: application/json` or
    /// no file cached: the answer as JSON, to draw the initials or the placeholder).
    func respond(userID: String, size: Double, scale: Double, ifNoneMatch: String?, wantsJSON: Bool) -> RouteResponse {
        let answer: CacheLookup.Answer
        do {
            answer = try lookup.blocking.answer(forUser: userID, viewSize: size, scale: scale)
        } catch LookupError.notFound(let what) {
            return .json(404, ["error": "\(what) is not in the cache"])
        } catch LookupError.invalidArgument(let problem) {
            return .json(400, ["error": problem])
        } catch {
            log("lookup of \(userID.debugDescription) failed: \(error)")
            return .json(503, ["error": "the avatar cache cannot be read"])
        }
        guard let file = answer.file, !wantsJSON else { return .json(200, answer) }
        // A cache file is named by the SHA-256 of its source's bytes, the tier and the
        // format: another photo, tier or format is another name, so the name validates.
        let etag = "\"" + file.lastPathComponent + "\""
        let caching = [("ETag", etag), ("Cache-Control", "public, max-age=300"), ("Vary", "Accept")]
        // If-None-Match compares weakly: W/"x" matches "x".
        let offered: [String] = (ifNoneMatch ?? "").split(separator: ",").map { (tag: Substring) -> String in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
        }
        if offered.contains(where: { $0 == etag || $0 == "*" }) {
            return RouteResponse(status: 304, headers: caching)
        }
        guard let bytes = FileManager.default.contents(atPath: file.path) else {
            // Pruned between the answer and the read: the next request finds what is there.
            log("\(file.path) went away before it was read")
            return .json(503, ["error": "the avatar's file went away; try again"])
        }
        return RouteResponse(status: 200, headers: [("Content-Type", Self.contentType(of: file))] + caching, body: [UInt8](bytes))
    }

    static func contentType(of file: URL) -> String {
        switch file.pathExtension {
        case "png": "image/png"
        case "webp": "image/webp"
        case "avif": "image/avif"
        default: "image/jpeg"
        }
    }
}

extension RouteResponse {
    static func json(_ status: Int, _ value: some Encodable) -> RouteResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map { [UInt8]($0) } ?? []
        return RouteResponse(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-cache")], body: body)
    }
}

func log(_ line: String) {
    FileHandle.standardError.write(Data("lookup-route: \(line)\n".utf8))
}

// MARK: - HTTP/1.1 on a socket

/// One connection: requests read and answered in turn (keep-alive) until the client
/// closes, asks to close, or takes over 10 s to send a request's head or to take an
/// answer. Requests are bounded: 8 KB of head, no body.
func serve(connection fd: Int32, route: AvatarRoute) {
    defer { close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        var headEnd: Int?
        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while headEnd == nil {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) { headEnd = end.upperBound; break }
            guard buffer.count < 8192 else { return send(fd, .json(431, ["error": "request head over 8 KB"]), head: false, close: true) }
            // A client trickling its head a byte at a time holds the thread 10 s at most.
            guard DispatchTime.now().uptimeNanoseconds < deadline else { return }
            let count = read(fd, &chunk, min(chunk.count, 8192 - buffer.count))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            buffer += chunk[0..<count]
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd!)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: true)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return send(fd, .json(400, ["error": "not an HTTP/1.x request"]), head: false, close: true) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        // No request this route takes has a body; one announced is refused, not read.
        if headers["transfer-encoding"] != nil || (headers["content-length"].map { $0 != "0" } ?? false) {
            return send(fd, .json(413, ["error": "requests carry no body here"]), head: false, close: true)
        }
        let method = String(parts[0])
        let connection = headers["connection"]?.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        let closing = connection.contains("close") || (parts[2] == "HTTP/1.0" && !connection.contains("keep-alive"))
        let response = respond(method: method, target: String(parts[1]), headers: headers, route: route)
        send(fd, response, head: method == "HEAD", close: closing)
        if closing { return }
    }
}

func respond(method: String, target: String, headers: [String: String], route: AvatarRoute) -> RouteResponse {
    guard method == "GET" || method == "HEAD" else {
        var response = RouteResponse.json(405, ["error": "only GET and HEAD"])
        response.headers.append(("Allow", "GET, HEAD"))
        return response
    }
    guard let components = URLComponents(string: target), components.path.hasPrefix("/avatars/") else {
        return .json(404, ["error": "no such route: GET /avatars/{userID}?size=55&scale=3"])
    }
    let userID = String(components.path.dropFirst("/avatars/".count))
    let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    guard let size = Double(query["size"] ?? "55"), let scale = Double(query["scale"] ?? "3") else {
        return .json(400, ["error": "size is a number of points, scale a number of pixels per point"])
    }
    return route.respond(userID: userID, size: size, scale: scale, ifNoneMatch: headers["if-none-match"],
                         wantsJSON: headers["accept"]?.contains("application/json") == true)
}

func send(_ fd: Int32, _ response: RouteResponse, head: Bool, close: Bool) {
    let reasons = [200: "OK", 304: "Not Modified", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                   413: "Content Too Large", 431: "Request Header Fields Too Large", 503: "Service Unavailable"]
    var text = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
    for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
    if response.status != 304 { text += "Content-Length: \(response.body.count)\r\n" }
    if close { text += "Connection: close\r\n" }
    text += "\r\n"
    var bytes = [UInt8](text.utf8)
    if !head && response.status != 304 { bytes += response.body }
    var sent = 0
    while sent < bytes.count {
        let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return }
        sent += count
    }
}

// MARK: - Start-up

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let cache = option("cache") else {
    log("usage: lookup-route --cache <dir> [--host 127.0.0.1] [--port 8080]")
    exit(64)
}
let host = option("host") ?? "127.0.0.1"
let route: AvatarRoute
do {
    route = try AvatarRoute(cache: URL(fileURLWithPath: cache))
} catch {
    log("\(error)")
    exit(73)
}
signal(SIGPIPE, SIG_IGN)
// SIGTERM and SIGINT end the server as they should, whatever mask its parent left blocked.
var unblocked = sigset_t()
sigemptyset(&unblocked)
sigprocmask(SIG_SETMASK, &unblocked, nil)
let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
var yes: Int32 = 1
setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
var address = sockaddr_in()
address.sin_family = sa_family_t(AF_INET)
address.sin_port = in_port_t(UInt16(option("port") ?? "8080") ?? 8080).bigEndian
guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
    log("--host \(host) is not an IPv4 address")
    exit(64)
}
let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
guard bound == 0, listen(listener, 128) == 0 else {
    log("cannot listen on \(host): \(String(cString: strerror(errno)))")
    exit(71)
}
var length = socklen_t(MemoryLayout<sockaddr_in>.size)
_ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
FileHandle.standardOutput.write(Data("listening on http://\(host):\(UInt16(bigEndian: address.sin_port))\n".utf8))
// 64 threads, each taking the next connection and serving it: up to 64 at once (beyond
// that, connections wait in the listener's backlog).
for _ in 0..<63 {
    Thread.detachNewThread {
        while true {
            let fd = accept(listener, nil, nil)
            if fd >= 0 { serve(connection: fd, route: route) }
        }
    }
}
while true {
    let fd = accept(listener, nil, nil)
    if fd >= 0 { serve(connection: fd, route: route) }
}
