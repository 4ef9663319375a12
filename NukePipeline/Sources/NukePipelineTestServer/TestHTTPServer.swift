import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 for the pipeline's tests and benchmarks: it serves resources with ETag
/// and Last-Modified (and `Cache-Control` when given), honours `Range` with `If-Range` and
/// answers `If-None-Match` / `If-Modified-Since` with `304`, counts requests, and injects faults on
/// demand (a connection cut after N bytes, a slow drip, a status, a wrong content type,
/// redirect chains).
public final class TestHTTPServer: Sendable {
    public struct Resource: Sendable {
        public var data: Data
        public var etag: String?
        public var lastModified: String?
        public var contentType = "application/octet-stream"
        /// Sent as `Cache-Control`.
        public var cacheControl: String?
        /// Cut the connection after this many body bytes, for the next request only.
        public var cutAfter: Int?
        /// Send the body in pieces of this size, this far apart.
        public var drip: (bytes: Int, interval: TimeAmount)?
        /// Answer with this status and no body.
        public var status: Int?
        /// Sent as `Location` with ``status`` (a redirect to anywhere).
        public var location: String?
        /// Send this many body bytes, then wait for ``TestHTTPServer/resume(_:)`` (each request).
        public var pauseAfter: Int?

        /// A resource; the faults are off unless given.
        public init(data: Data, etag: String? = nil, lastModified: String? = nil, contentType: String = "application/octet-stream",
                    cacheControl: String? = nil, cutAfter: Int? = nil, drip: (bytes: Int, interval: TimeAmount)? = nil, status: Int? = nil,
                    location: String? = nil, pauseAfter: Int? = nil) {
            self.data = data
            self.etag = etag
            self.lastModified = lastModified
            self.contentType = contentType
            self.cacheControl = cacheControl
            self.cutAfter = cutAfter
            self.drip = drip
            self.status = status
            self.location = location
            self.pauseAfter = pauseAfter
        }
    }

    /// A request as the server saw it.
    public struct Received: Sendable {
        public var path: String
        public var range: String?
        public var ifRange: String?
        /// `If-None-Match`, else `If-Modified-Since`.
        public var condition: String?
        /// The HTTP version's major number: 1, or 2.
        public var version: Int
    }

    /// A certificate and its key, for a server that speaks TLS (and HTTP/2 when the client
    /// offers it by ALPN).
    public struct TLS: Sendable {
        public var certificateChain: [NIOSSLCertificate]
        public var privateKey: NIOSSLPrivateKey

        public init(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }
    }

    private let state = HandlerContext()
    private let channel: any Channel
    /// The port on 127.0.0.1.
    public let port: Int
    /// `http`, or `https` for a server with TLS.
    public let scheme: String

    /// Starts a server on an ephemeral port: HTTP/1.1, or with `tls`, HTTPS speaking HTTP/2 to
    /// clients that offer `h2` and HTTP/1.1 to the others.
    public init(tls: TLS? = nil) async throws {
        let box = state
        let sslContext: NIOSSLContext? = try tls.map { tls in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: tls.certificateChain.map { .certificate($0) }, privateKey: .privateKey(tls.privateKey))
            configuration.applicationProtocols = ["h2", "http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        }
        @Sendable func http1(_ channel: any Channel) -> EventLoopFuture<Void> {
            channel.pipeline.configureHTTPServerPipeline().flatMap { channel.pipeline.addHandler(Handler(context: box)) }
        }
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard let sslContext else { return http1(channel) }
                // Child channels are initialised on their event loop: handlers are added in place.
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: { channel in
                    channel.configureHTTP2Pipeline(mode: .server, inboundStreamInitializer: { stream in
                        do {
                            try stream.pipeline.syncOperations.addHandlers([HTTP2FramePayloadToHTTP1ServerCodec(), Handler(context: box)])
                            return stream.eventLoop.makeSucceededVoidFuture()
                        } catch {
                            return stream.eventLoop.makeFailedFuture(error)
                        }
                    }).map { _ in }
                }, http1ChannelConfigurator: http1)
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
        scheme = tls == nil ? "http" : "https"
    }

    /// Stops listening.
    public func shutdown() async {
        try? await channel.close()
    }

    /// Lets the paused responses for `path` go on; returns how many there were.
    @discardableResult
    public func resume(_ path: String) -> Int {
        let waiting = state.paused.withLock { $0.removeValue(forKey: path) ?? [] }
        for resume in waiting { resume() }
        return waiting.count
    }

    /// Responses for `path` paused now.
    public func pausedCount(_ path: String) -> Int { state.paused.withLock { $0[path]?.count ?? 0 } }

    /// `http://127.0.0.1:PORT/path`; `https://localhost:PORT/path` with TLS (the name the test
    /// certificate is for).
    public func url(_ path: String) -> URL { URL(string: "\(scheme)://\(scheme == "https" ? "localhost" : "127.0.0.1"):\(port)\(path)")! }

    /// Serves `resource` at `path`.
    public func serve(_ path: String, _ resource: Resource) { state.resources.withLock { $0[path] = resource } }

    /// Changes the resource at `path`.
    public func update(_ path: String, _ change: (inout Resource) -> Void) {
        state.resources.withLock { if var resource = $0[path] { change(&resource); $0[path] = resource } }
    }

    /// Requests received for `path` (redirect hops counted on their own paths).
    public func requests(for path: String) -> [Received] { state.log.withLock { $0.filter { $0.path == path } } }
    /// Every request received.
    public var requestCount: Int { state.log.withLock { $0.count } }

    // MARK: - The handler

    /// What the server and its handlers share.
    private final class HandlerContext: Sendable {
        let resources = Mutex<[String: Resource]>([:])
        let log = Mutex<[Received]>([])
        /// Responses paused by ``Resource/pauseAfter``, by path.
        let paused = Mutex<[String: [@Sendable () -> Void]]>([:])
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked: NIO calls a handler on its channel's event loop only; the state is that loop's.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let context: HandlerContext
        private var head: HTTPRequestHead?

        init(context: HandlerContext) {
            self.context = context
        }

        func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                if let head { respond(to: head, channelContext) }
            }
        }

        private func respond(to head: HTTPRequestHead, _ channel: ChannelHandlerContext) {
            let path = String(head.uri.split(separator: "?").first ?? "")
            context.log.withLock { $0.append(Received(path: path, range: head.headers.first(name: "Range"), ifRange: head.headers.first(name: "If-Range"),
                                                    condition: head.headers.first(name: "If-None-Match") ?? head.headers.first(name: "If-Modified-Since"),
                                                    version: head.version.major)) }
            // /redirect/N/rest → /redirect/(N-1)/rest … → /rest; /loop → /loop.
            let parts = path.split(separator: "/", maxSplits: 2).map(String.init)
            if parts.first == "redirect", parts.count == 3, let hops = Int(parts[1]) {
                let target = hops > 1 ? "/redirect/\(hops - 1)/\(parts[2])" : "/\(parts[2])"
                return send(channel, status: .found, headers: [("Location", target)], body: Data())
            }
            if path == "/loop" { return send(channel, status: .found, headers: [("Location", "/loop")], body: Data()) }
            let resource = context.resources.withLock { resources -> Resource? in
                let resource = resources[path]
                resources[path]?.cutAfter = nil
                return resource
            }
            guard let resource else { return send(channel, status: .notFound, headers: [], body: Data()) }
            if let status = resource.status {
                return send(channel, status: HTTPResponseStatus(statusCode: status), headers: resource.location.map { [("Location", $0)] } ?? [], body: Data())
            }
            var headers: [(String, String)] = [("Content-Type", resource.contentType), ("Accept-Ranges", "bytes"), ("Date", Self.now())]
            if let etag = resource.etag { headers.append(("ETag", etag)) }
            if let lastModified = resource.lastModified { headers.append(("Last-Modified", lastModified)) }
            if let cacheControl = resource.cacheControl { headers.append(("Cache-Control", cacheControl)) }
            let ifNoneMatch = head.headers.first(name: "If-None-Match"), ifModifiedSince = head.headers.first(name: "If-Modified-Since")
            if let etag = resource.etag, ifNoneMatch == etag {
                return send(channel, status: .notModified, headers: headers, body: Data())
            }
            if ifNoneMatch == nil, let lastModified = resource.lastModified, ifModifiedSince == lastModified {
                return send(channel, status: .notModified, headers: headers, body: Data())
            }
            var status = HTTPResponseStatus.ok
            var body = resource.data
            if let range = head.headers.first(name: "Range"), range.hasPrefix("bytes="),
               let first = Int(range.dropFirst(6).split(separator: "-").first ?? ""), first < body.count {
                let ifRange = head.headers.first(name: "If-Range")
                if ifRange == nil || ifRange == resource.etag || ifRange == resource.lastModified {
                    status = .partialContent
                    headers.append(("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"))
                    body = body.subdata(in: first..<body.count)
                }
            }
            send(channel, status: status, headers: headers, body: body, cutAfter: resource.cutAfter, drip: resource.drip,
                 pause: resource.pauseAfter.map { (path, $0) })
        }

        /// The time now as an HTTP date (RFC 9110 §5.6.7), which a `Last-Modified` is strong against.
        private static func now() -> String {
            var time = time_t(Foundation.time(nil))
            var parts = tm()
            gmtime_r(&time, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            return String(format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", days[Int(parts.tm_wday)], parts.tm_mday, months[Int(parts.tm_mon)],
                          parts.tm_year + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec)
        }

        private func send(_ channel: ChannelHandlerContext, status: HTTPResponseStatus, headers: [(String, String)], body: Data,
                          cutAfter: Int? = nil, drip: (bytes: Int, interval: TimeAmount)? = nil, pause: (path: String, after: Int)? = nil) {
            var head = HTTPResponseHead(version: .http1_1, status: status)
            for (name, value) in headers { head.headers.add(name: name, value: value) }
            head.headers.add(name: "Content-Length", value: String(body.count))
            channel.write(wrapOutboundOut(.head(head)), promise: nil)
            let sent = cutAfter.map { min($0, body.count) } ?? body.count
            // Piece boundaries: every drip size, and the pause point.
            var bounds = Set(stride(from: 0, to: sent, by: max(1, drip?.bytes ?? max(sent, 1))))
            if let pause, pause.after < sent { bounds.insert(pause.after) }
            let starts = bounds.sorted()
            let pieces = starts.indices.map { body.subdata(in: starts[$0]..<(($0 + 1 < starts.count) ? starts[$0 + 1] : sent)) }
            let pauseIndex = pause.flatMap { pause in starts.firstIndex(of: pause.after) }
            let shared = context
            let loop = channel.eventLoop
            let boxed = NIOLoopBound(channel, eventLoop: loop)
            @Sendable func write(_ index: Int, resumed: Bool = false) {
                if index == pauseIndex, !resumed, let pause {
                    shared.paused.withLock { $0[pause.path, default: []].append({ loop.execute { write(index, resumed: true) } }) }
                    return
                }
                let channel = boxed.value
                guard index < pieces.count else {
                    // A cut is a FIN after the bytes sent, never a reset: a reset lets the client's
                    // kernel drop what it has received and not yet handed on, which no client keeps.
                    if cutAfter != nil { channel.close(mode: .output, promise: nil) } else { channel.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) }
                    return
                }
                // The next piece (or the cut) after this one is written: a close drops unwritten data.
                channel.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: pieces[index]))))).whenSuccess {
                    if let drip { loop.scheduleTask(in: drip.interval) { write(index + 1) } } else { write(index + 1) }
                }
            }
            channel.flush()
            write(0)
        }
    }
}
