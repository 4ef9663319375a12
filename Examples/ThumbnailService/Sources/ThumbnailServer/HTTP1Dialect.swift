import NIOCore
import NIOHTTP1

/// HTTP/1 as clients speak it, in the pipeline before the conversion to version-less HTTP types
/// (which drops the version):
/// - a request that does not keep the connection alive (HTTP/1.0 without `Connection:
///   keep-alive`, or `Connection: close`) is passed on with `Connection: close`, which
///   ``ConnectionGuard`` answers in kind and closes after the response: an HTTP/1.0 client reads
///   to the end of the connection and would otherwise wait for the idle timeout;
/// - an HTTP/1.0 keep-alive request's response says `Connection: keep-alive`, as that client needs;
/// - `Expect: 100-continue` is answered `100 Continue` at once, unless the declared length is
///   over the upload limit: then the final `413` comes first and the body is never read (curl
///   otherwise waits a second for the 100 before sending a body).
final class HTTP1Dialect: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let maxUploadBytes: Int
    /// Per request in flight (pipelined requests answer in order): its response says keep-alive.
    private var saysKeepAlive: [Bool] = []

    init(maxUploadBytes: Int) {
        self.maxUploadBytes = maxUploadBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let keepAlive = head.isKeepAlive
        if !keepAlive { head.headers.replaceOrAdd(name: "connection", value: "close") }
        let modern = head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1)
        saysKeepAlive.append(keepAlive && !modern)
        if modern, head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            head.headers.remove(name: "expect")
            let declared = head.headers.first(name: "content-length").flatMap { Int($0) }
            if (declared ?? 0) <= maxUploadBytes {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where !(100..<200).contains(head.status.code):
            if saysKeepAlive.first == true, !head.headers.contains(name: "connection") {
                head.headers.add(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            if !saysKeepAlive.isEmpty { saysKeepAlive.removeFirst() }
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}
