import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// An origin on 127.0.0.1 that answers each request with exactly the bytes a script gives, for
/// tests that play a lying or careless server: a `Content-Length` the body does not keep, a
/// chunked body cut short, a `206` for another version, a `Vary` the caches must honour. Every
/// connection is closed after one answer (`Connection: close`), so what the script writes is the
/// whole exchange; the requests are kept as they arrived, headers included.
public final class ScriptedOrigin: Sendable {
    /// A request as it arrived.
    public struct Request: Sendable {
        public var method: String
        /// The path and query, as sent.
        public var target: String
        /// The headers, names as sent.
        public var headers: [(name: String, value: String)]

        /// The first value of the header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// The requests received, shared with the handlers.
    private final class Log: Sendable {
        let requests = Mutex<[Request]>([])
    }

    private let channel: any Channel
    private let log = Log()
    /// The port on 127.0.0.1.
    public let port: Int

    /// Starts an origin on an ephemeral port whose answer to each request is `script`'s bytes
    /// (given the request and how many came before it).
    public init(_ script: @escaping @Sendable (Request, _ index: Int) -> Data) async throws {
        let log = self.log
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler { request in
                        let index = log.requests.withLock { log in
                            log.append(request)
                            return log.count - 1
                        }
                        return script(request, index)
                    })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Stops listening.
    public func shutdown() async {
        try? await channel.close()
    }

    /// `http://HOST:PORT/path` (`host` 127.0.0.1 unless given: `localhost` names the same server as another origin).
    public func url(_ path: String, host: String = "127.0.0.1") -> URL { URL(string: "http://\(host):\(port)\(path)")! }

    /// The requests received, in order.
    public var requests: [Request] { log.requests.withLock { $0 } }

    // MARK: - Answers

    /// An HTTP/1.1 answer: the status line, `headers`, `Connection: close`, then `body`.
    /// `Content-Length` is the body's unless `headers` has one (a lie the test chooses); `cutAfter`
    /// ends the bytes after that many of the body.
    public static func response(_ status: Int, _ headers: [(String, String)] = [], body: Data = Data(), cutAfter: Int? = nil) -> Data {
        var head = "HTTP/1.1 \(status) \(reason(status))\r\n"
        var headers = headers
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        if !framed { headers.append(("Content-Length", String(body.count))) }
        headers.append(("Connection", "close"))
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Data(head.utf8) + body.prefix(cutAfter ?? body.count)
    }

    /// A chunked answer of `body` in pieces of `chunk` bytes, ended by the last chunk unless `cut`.
    public static func chunked(_ status: Int, _ headers: [(String, String)] = [], body: Data, chunk: Int = 1000, cut: Bool = false) -> Data {
        var framed = Data()
        var offset = 0
        while offset < body.count {
            let piece = body[body.startIndex + offset..<body.startIndex + min(offset + chunk, body.count)]
            framed += Data((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Data("\r\n".utf8)
            offset += piece.count
        }
        if !cut { framed += Data("0\r\n\r\n".utf8) } else { framed = framed.prefix(framed.count - 2) }
        return response(status, headers + [("Transfer-Encoding", "chunked")], body: framed)
    }

    private static func reason(_ status: Int) -> String {
        [200: "OK", 206: "Partial Content", 301: "Moved Permanently", 302: "Found", 304: "Not Modified", 404: "Not Found"][status] ?? "Status"
    }

    // MARK: - The handler

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let respond: @Sendable (Request) -> Data
        /// The bytes of the request head so far, and whether it was answered; NIO calls a
        /// handler on its channel's loop only, the box makes that checkable.
        private let received = Mutex((bytes: Data(), answered: false))

        init(respond: @escaping @Sendable (Request) -> Data) {
            self.respond = respond
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let head: Data? = received.withLock { received in
                // One answer per connection: later bytes are ignored.
                guard !received.answered else { return nil }
                received.bytes.append(contentsOf: buffer.readableBytesView)
                guard let end = received.bytes.range(of: Data("\r\n\r\n".utf8)) else { return nil }
                received.answered = true
                return Data(received.bytes[..<end.lowerBound])
            }
            guard let head, let text = String(data: head, encoding: .utf8) else { return }
            let lines = text.components(separatedBy: "\r\n")
            let start = lines[0].split(separator: " ")
            let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let request = Request(method: start.first.map(String.init) ?? "", target: start.count > 1 ? String(start[1]) : "", headers: headers)
            let answer = respond(request)
            let channel = context.channel
            channel.writeAndFlush(ByteBuffer(bytes: answer)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
