import HTTPTypes
import NIOCore
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

/// Per-connection deadlines and a per-client connection cap, in the channel pipeline (after HTTP
/// decoding), so that slow or idle clients cannot hold the server's connections:
/// - a request's head must arrive within `headerTimeout` of the connection opening (or of the
///   previous response): a client sending headers a byte a second is cut off;
/// - its body within `bodyTimeout(contentLength)`: a floor plus the time the declared length
///   takes at a minimum rate;
/// - a response that says `Connection: close` (an upload refused before its body was read)
///   closes the connection once written, instead of the server reading the rest of the body;
///   so does the response to a request that said `Connection: close` (``HTTP1Dialect`` says it
///   for HTTP/1.0), and the response says so;
/// - at most `perClient` connections from one address at once; more are closed at once. A trusted
///   proxy (which carries many clients' requests) is not capped;
/// - with `proxyProtocol`, a trusted proxy's connection begins with a PROXY v2 header
///   (``ProxyProtocol/Decoder``, put first in the pipeline): the client it names is capped as a
///   peer would be, and each request carries it to ``ClientAddressing`` in
///   ``ClientAddressing/proxiedClient`` (a field the client's own copy of is removed).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Settings: Sendable {
        var headerTimeout: TimeAmount = .seconds(10)
        var bodyFloor: TimeAmount = .seconds(10)
        /// Bytes a second an upload must average beyond the floor.
        var minimumBodyRate: Int = 64 << 10
        var maxUploadBytes: Int = 32 << 20
        var perClient: Int = 32
        /// Peers whose connections are not counted: trusted proxies.
        var uncappedPeers = ClientAddressing(trustedProxies: [])
        /// Trusted proxies speak the PROXY protocol (version 2).
        var proxyProtocol = false

        func bodyTimeout(contentLength: Int?) -> TimeAmount {
            let bytes = min(contentLength ?? maxUploadBytes, maxUploadBytes)
            return bodyFloor + .seconds(Int64(bytes / max(1, minimumBodyRate)))
        }
    }

    /// Open connections per client address, across the server.
    final class Registry: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Counts a new connection; `false` when the client has `limit` already.
        func open(_ client: String, limit: Int) -> Bool {
            counts.withLock { counts in
                guard counts[client, default: 0] < limit else { return false }
                counts[client, default: 0] += 1
                return true
            }
        }

        func close(_ client: String) {
            counts.withLock { counts in
                let count = counts[client, default: 1] - 1
                counts[client] = count > 0 ? count : nil
            }
        }
    }

    private let settings: Settings
    private let registry: Registry
    private var client: String?
    /// The client a PROXY header named.
    private var proxiedClient: String?
    private var deadline: Scheduled<Void>?
    private var closesAfterResponse = false
    /// The request in progress asked for the connection to close after its response.
    private var requestCloses = false
    /// A request's head has arrived and its response is not yet written.
    private var inRequest = false
    /// The server is draining: close once the current response is written.
    private var quiescing = false

    init(settings: Settings, registry: Registry) {
        self.settings = settings
        self.registry = registry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = Self.clientAddress(context.channel.remoteAddress)
        // HTTP/1.0 and `Expect`, where the request's version is still known.
        if let codec = try? context.pipeline.syncOperations.handler(type: HTTP1ToHTTPServerCodec.self) {
            try? context.pipeline.syncOperations.addHandler(HTTP1Dialect(maxUploadBytes: settings.maxUploadBytes), position: .before(codec))
        }
        if !settings.uncappedPeers.isTrusted(address) {
            count(address, context)
        } else if settings.proxyProtocol {
            try? context.pipeline.syncOperations.addHandler(ProxyProtocol.Decoder(), position: .first)
        }
        arm(context, after: settings.headerTimeout)
    }

    /// Counts the connection against `address`'s cap, or closes it.
    private func count(_ address: String, _ context: ChannelHandlerContext) {
        guard registry.open(address, limit: settings.perClient) else {
            context.close(promise: nil)
            return
        }
        client = address
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if let client { registry.close(client) }
        client = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            head.headerFields[ClientAddressing.proxiedClient] = nil
            if let proxiedClient { head.headerFields[ClientAddressing.proxiedClient] = proxiedClient }
            inRequest = true
            requestCloses = head.headerFields[.connection].map { $0.lowercased().contains("close") } ?? false
            let length = head.headerFields[.contentLength].flatMap { Int($0) }
            arm(context, after: settings.bodyTimeout(contentLength: length))
            return context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body:
            break
        case .end:
            // The request is in; the response is the server's to make.
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            if quiescing || requestCloses, head.status.code >= 200 { head.headerFields[.connection] = "close" }
            closesAfterResponse = head.headerFields[.connection] == "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            inRequest = false
            if closesAfterResponse {
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                let channel = context.channel
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            } else {
                context.write(data, promise: promise)
                // Keep-alive: the next request's head has its deadline.
                arm(context, after: settings.headerTimeout)
            }
        }
    }

    /// Draining (SIGTERM): an idle keep-alive connection closes now, a busy one after its
    /// response (which says `Connection: close`), instead of at its idle deadline.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let proxied = event as? ProxyProtocol.Decoder.Client, proxiedClient == nil {
            proxiedClient = proxied.address.description
            if !settings.uncappedPeers.isTrusted(proxied.address.description) { count(proxied.address.description, context) }
            return
        }
        if event is ChannelShouldQuiesceEvent {
            quiescing = true
            if !inRequest { context.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func arm(_ context: ChannelHandlerContext, after timeout: TimeAmount) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    /// The client's IP address, without its port.
    static func clientAddress(_ address: SocketAddress?) -> String {
        address?.ipAddress ?? "unknown"
    }
}
