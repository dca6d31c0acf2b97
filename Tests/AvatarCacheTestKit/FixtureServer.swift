import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP server on 127.0.0.1, port chosen by the kernel, for the download path.
/// It records every request it receives (path and headers) so tests can count them.
package final class FixtureServer: @unchecked Sendable {
    package enum Reply: Sendable {
        case ok(bytes: [UInt8], headers: [(String, String)] = [])
        case status(Int)
        case statusWithHeaders(Int, [(String, String)])
        /// Waits, then answers 200 with the bytes.
        case delayed(seconds: Double, bytes: [UInt8])
        /// 3xx to another location.
        case redirect(String)
        /// 200 with an ETag, or 304 when the request's If-None-Match matches it.
        case conditional(bytes: [UInt8], etag: String, headers: [(String, String)] = [])
        /// One reply per request to the path, in order; the last repeats.
        indirect case sequence([Reply])
        /// Sends the headers and part of the body, then one byte per interval, forever.
        case trickle(prefix: [UInt8], interval: Double)
        /// 200 without Content-Length (chunked), `total` bytes starting with `prefix`.
        case unsized(prefix: [UInt8], total: Int)
        /// 200, chunked, `total` bytes written 64 KiB at a time, each chunk only once the
        /// one before has reached the socket; `streamedBytes` counts what was written, so
        /// a test sees how much the client let arrive before it closed the connection.
        case streamed(total: Int)
        /// The reply the closure gives at the moment of the request (a rate limit's answer).
        case computed(@Sendable () -> Reply)
    }

    fileprivate let streamed = NIOLockedValueBox(0)
    /// Bytes of `.streamed` bodies written to sockets so far.
    package var streamedBytes: Int { streamed.withLockedValue { $0 } }

    package struct Request: Sendable {
        package var path: String
        package var headers: [(String, String)]
        /// When its head was read.
        package var at = Date()
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel!
    private let routes: NIOLockedValueBox<[String: Reply]>
    private let log = NIOLockedValueBox<[Request]>([])
    private let accepted = NIOLockedValueBox(0)
    /// Connections accepted, whatever was said on them (a TLS hello counts too).
    package var connections: Int { accepted.withLockedValue { $0 } }
    package private(set) var port = 0

    /// `host`: another loopback address (127.0.0.2, …) for a test that needs two servers
    /// on one port; `port` 0 lets the kernel choose.
    package init(routes: [String: Reply] = [:], host: String = "127.0.0.1", port: Int = 0) throws {
        self.routes = NIOLockedValueBox(routes)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                accepted.withLockedValue { $0 += 1 }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(server: self))
                }
            }
        precondition(host.hasPrefix("127."), "fixture servers listen on loopback only")
        channel = try bootstrap.bind(host: host, port: port).wait()
        self.port = channel.localAddress!.port!
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    package func url(_ path: String) -> String { baseURL + path }

    package func setRoute(_ path: String, _ reply: Reply) {
        routes.withLockedValue { $0[path] = reply }
    }

    package var requests: [Request] { log.withLockedValue { $0 } }

    package func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    fileprivate func reply(for path: String) -> Reply {
        routes.withLockedValue { $0[path] } ?? .status(404)
    }

    /// Records a request; returns how many requests that path has had, this one included.
    fileprivate func record(_ request: Request) -> Int {
        log.withLockedValue { log in
            log.append(request)
            return log.filter { $0.path == request.path }.count
        }
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let server: FixtureServer
        var head: HTTPRequestHead?

        init(server: FixtureServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                let count = server.record(Request(path: head.uri, headers: head.headers.map { ($0.name, $0.value) }))
                respond(to: head, reply: server.reply(for: head.uri), count: count, context: context)
            }
        }

        private func respond(to head: HTTPRequestHead, reply: Reply, count: Int, context: ChannelHandlerContext) {
            switch reply {
            case .sequence(let replies):
                respond(to: head, reply: replies[min(count - 1, replies.count - 1)], count: count, context: context)
            case .computed(let reply):
                respond(to: head, reply: reply(), count: count, context: context)
            case let .conditional(bytes, etag, headers):
                if head.headers["If-None-Match"].contains(etag) {
                    write(status: .notModified, bytes: [], headers: headers + [("ETag", etag)], context: context)
                } else {
                    write(status: .ok, bytes: bytes, headers: headers + [("ETag", etag)], context: context)
                }
            case let .unsized(prefix, total):
                let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders([("Connection", "close")]))
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                var sent = 0
                let chunk = [UInt8](repeating: 0x42, count: 64 * 1024)
                while sent < total {
                    let piece = sent == 0 ? prefix + chunk.prefix(max(0, min(chunk.count, total) - prefix.count)) : Array(chunk.prefix(total - sent))
                    var buffer = context.channel.allocator.buffer(capacity: piece.count)
                    buffer.writeBytes(piece)
                    context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                    sent += piece.count
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
            case .streamed(let total):
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok,
                                                                     headers: HTTPHeaders([("Content-Type", "image/jpeg")])))), promise: nil)
                Self.stream(NIOLoopBound(context, eventLoop: context.eventLoop), total: total, sent: 0, counter: server.streamed)
            case let .trickle(prefix, interval):
                var responseHeaders = HTTPHeaders([("Content-Length", String(prefix.count + 1_000_000))])
                responseHeaders.add(name: "Content-Type", value: "image/jpeg")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: responseHeaders))), promise: nil)
                var buffer = context.channel.allocator.buffer(capacity: prefix.count)
                buffer.writeBytes(prefix)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(Int64(interval * 1000)), delay: .milliseconds(Int64(interval * 1000))) { task in
                    let context = loopBound.value
                    guard context.channel.isActive else { task.cancel(); return }
                    var byte = context.channel.allocator.buffer(capacity: 1)
                    byte.writeInteger(UInt8(0))
                    context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(byte))), promise: nil)
                }
            case let .ok(bytes, headers):
                write(status: .ok, bytes: bytes, headers: headers, context: context)
            case let .statusWithHeaders(code, headers):
                write(status: HTTPResponseStatus(statusCode: code), bytes: Array("status \(code)".utf8), headers: headers, context: context)
            case .status(let code):
                write(status: HTTPResponseStatus(statusCode: code), bytes: Array("status \(code)".utf8), headers: [], context: context)
            case let .delayed(seconds, bytes):
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
                    self.write(status: .ok, bytes: bytes, headers: [], context: loopBound.value)
                }
            case .redirect(let location):
                write(status: .found, bytes: [], headers: [("Location", location)], context: context)
            }
        }

        /// The next 64 KiB of a `.streamed` body, once the last has reached the socket.
        private static func stream(_ bound: NIOLoopBound<ChannelHandlerContext>, total: Int, sent: Int, counter: NIOLockedValueBox<Int>) {
            let context = bound.value
            guard context.channel.isActive else { return }
            guard sent < total else {
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                return
            }
            var buffer = context.channel.allocator.buffer(capacity: 64 * 1024)
            buffer.writeRepeatingByte(0x42, count: min(64 * 1024, total - sent))
            let count = buffer.readableBytes
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer)))).whenSuccess {
                counter.withLockedValue { $0 += count }
                stream(bound, total: total, sent: sent + count, counter: counter)
            }
        }

        private func write(status: HTTPResponseStatus, bytes: [UInt8], headers: [(String, String)], context: ChannelHandlerContext) {
            guard context.channel.isActive else { return }
            var responseHeaders = HTTPHeaders(headers)
            responseHeaders.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
            responseHeaders.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: responseHeaders))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        }
    }
}
