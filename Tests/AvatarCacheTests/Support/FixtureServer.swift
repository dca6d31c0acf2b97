import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP server on 127.0.0.1, port chosen by the kernel, for the download path.
/// It records every request it receives (path and headers) so tests can count them.
final class FixtureServer: @unchecked Sendable {
    enum Reply: Sendable {
        case ok(bytes: [UInt8], headers: [(String, String)] = [])
        case status(Int)
        /// Waits, then answers 200 with the bytes.
        case delayed(seconds: Double, bytes: [UInt8])
        /// 3xx to another location.
        case redirect(String)
    }

    struct Request: Sendable {
        var path: String
        var headers: [(String, String)]
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel!
    private let routes: NIOLockedValueBox<[String: Reply]>
    private let log = NIOLockedValueBox<[Request]>([])
    private(set) var port = 0

    init(routes: [String: Reply] = [:]) throws {
        self.routes = NIOLockedValueBox(routes)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(server: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> String { baseURL + path }

    func setRoute(_ path: String, _ reply: Reply) {
        routes.withLockedValue { $0[path] = reply }
    }

    var requests: [Request] { log.withLockedValue { $0 } }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    fileprivate func reply(for path: String) -> Reply {
        routes.withLockedValue { $0[path] } ?? .status(404)
    }

    fileprivate func record(_ request: Request) {
        log.withLockedValue { $0.append(request) }
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
                server.record(Request(path: head.uri, headers: head.headers.map { ($0.name, $0.value) }))
                respond(to: head, context: context)
            }
        }

        private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
            switch server.reply(for: head.uri) {
            case let .ok(bytes, headers):
                write(status: .ok, bytes: bytes, headers: headers, context: context)
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

        private func write(status: HTTPResponseStatus, bytes: [UInt8], headers: [(String, String)], context: ChannelHandlerContext) {
            guard context.channel.isActive else { return }
            var responseHeaders = HTTPHeaders(headers)
            responseHeaders.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
            responseHeaders.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: responseHeaders))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
        }
    }
}
