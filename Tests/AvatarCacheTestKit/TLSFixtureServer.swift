import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A certificate authority made for one test run, and a server certificate it signed for
/// 127.0.0.1 and localhost (openssl, in a temporary folder): what an intranet photo server
/// has, and what `--ca-file` trusts.
package struct TestCertificateAuthority {
    package let folder: URL
    package var caFile: String { folder.appendingPathComponent("ca.pem").path }
    package var certificateFile: String { folder.appendingPathComponent("server.pem").path }
    package var keyFile: String { folder.appendingPathComponent("server.key").path }

    package init() throws {
        folder = try Fixtures.temporaryDirectory("tls-ca")
        let config = folder.appendingPathComponent("san.cnf")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-noenc", "-days", "2",
             "-subj", "/CN=avatar-cache test CA", "-keyout", "ca.key", "-out", "ca.pem"],
            ["req", "-newkey", "rsa:2048", "-noenc", "-subj", "/CN=127.0.0.1",
             "-keyout", "server.key", "-out", "server.csr"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "san.cnf", "-out", "server.pem"],
        ]
        for arguments in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = folder
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw NSError(domain: "openssl", code: Int(process.terminationStatus), userInfo: [NSLocalizedDescriptionKey: "openssl \(arguments.joined(separator: " "))"])
            }
        }
    }

    package func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// An HTTPS server on 127.0.0.1 speaking HTTP/2 (ALPN `h2`, and `http/1.1`), with the test
/// authority's certificate, that closes each connection after `streamsPerConnection`
/// requests as servers rotate their connections: the connection's last request is
/// answered, a GOAWAY names it, and streams the client opened past it are refused
/// (REFUSED_STREAM: never processed). Every path answers `body`, after `delay`, unless
/// `reply` names another status and headers for it. It advertises `maxConcurrentStreams`
/// streams a connection (SETTINGS_MAX_CONCURRENT_STREAMS, as nginx's 128).
package final class TLSFixtureServer: @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel!
    private let answered = NIOLockedValueBox(0)
    private let refused = NIOLockedValueBox(0)
    private let accepted = NIOLockedValueBox(0)
    package private(set) var port = 0

    /// Requests answered, streams refused, connections accepted.
    package var requestsAnswered: Int { answered.withLockedValue { $0 } }
    package var streamsRefused: Int { refused.withLockedValue { $0 } }
    package var connections: Int { accepted.withLockedValue { $0 } }
    /// A status and headers other than a photo, for a path; nil: the photo.
    package typealias Reply = @Sendable (String) -> (status: HTTPResponseStatus, headers: [(String, String)])?

    package init(authority: TestCertificateAuthority, body: [UInt8], streamsPerConnection: Int = .max,
                 maxConcurrentStreams: Int = 100, delay: TimeAmount = .zero, reply: Reply? = nil) throws {
        let certificates = try NIOSSLCertificate.fromPEMFile(authority.certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: authority.keyFile, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: certificates, privateKey: .privateKey(key))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                accepted.withLockedValue { $0 += 1 }
                let streams = NIOLockedValueBox(0)
                return channel.pipeline.addHandler(NIOSSLServerHandler(context: context)).flatMap {
                    channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: { connection in
                        let settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
                                        HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16)]
                        return connection.configureHTTP2Pipeline(mode: .server, initialLocalSettings: settings) { stream in
                            let number = streams.withLockedValue { $0 += 1; return $0 }
                            if number > streamsPerConnection {
                                // Past the connection's last request: refused, never processed.
                                self.refused.withLockedValue { $0 += 1 }
                                return stream.pipeline.addHandler(RefuseStream())
                            }
                            let last = number == streamsPerConnection
                            return stream.pipeline.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(),
                                Answer(body: body, answered: self.answered, goAwayAfter: last ? connection : nil, delay: delay, reply: reply),
                            ])
                        }.map { _ in }
                    }, http1ChannelConfigurator: { channel in
                        channel.pipeline.configureHTTPServerPipeline().flatMap {
                            channel.pipeline.addHandler(Answer(body: body, answered: self.answered, goAwayAfter: nil, delay: delay, reply: reply))
                        }
                    })
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
    }

    package func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    package func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Resets its stream with REFUSED_STREAM as soon as the request's headers arrive.
    private final class RefuseStream: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .headers = unwrapInboundIn(data) {
                context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            }
        }
    }

    /// Answers every request with `body`; the connection's last one then sends GOAWAY
    /// naming it, and closes the connection a moment later.
    private final class Answer: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let body: [UInt8]
        let answered: NIOLockedValueBox<Int>
        let goAwayAfter: Channel?
        let delay: TimeAmount
        let reply: Reply?
        private var path = ""

        init(body: [UInt8], answered: NIOLockedValueBox<Int>, goAwayAfter: Channel?, delay: TimeAmount, reply: Reply?) {
            self.body = body
            self.answered = answered
            self.goAwayAfter = goAwayAfter
            self.delay = delay
            self.reply = reply
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part = unwrapInboundIn(data)
            if case .head(let head) = part { path = head.uri }
            guard case .end = part else { return }
            guard delay > .zero else { return answer(context: context) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: delay) { bound.value.0.answer(context: bound.value.1) }
        }

        private func answer(context: ChannelHandlerContext) {
            if let (status, fields) = reply?(path) {
                var headers = HTTPHeaders(fields)
                headers.add(name: "Content-Length", value: "0")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                answered.withLockedValue { $0 += 1 }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Content-Type", value: "image/jpeg")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            answered.withLockedValue { $0 += 1 }
            let connection = goAwayAfter
            let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                guard let connection, let streamID else { return }
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
                connection.writeAndFlush(goAway, promise: nil)
                connection.eventLoop.scheduleTask(in: .milliseconds(50)) { connection.close(promise: nil) }
            }
        }
    }
}
