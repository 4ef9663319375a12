import NIOCore

/// HAProxy's PROXY protocol, version 2 (the binary header a load balancer writes before the
/// client's bytes; `send-proxy-v2` in HAProxy): who the client is when the proxy carries raw TCP
/// and adds no `X-Forwarded-For`.
enum ProxyProtocol {
    /// The 12 bytes every version 2 header starts with.
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// What a header says.
    enum Parsed: Equatable {
        /// Fewer bytes than the header needs so far.
        case incomplete
        /// A header of `length` bytes; `source` is the client's address, or `nil` for a `LOCAL`
        /// connection (the proxy's own health check) or an address family that has none (UNIX,
        /// UNSPEC): the peer stands for itself.
        case header(source: IPAddress?, length: Int)
        case invalid(String)
    }

    /// Reads the header at the start of `bytes`: its length, and its source address (TLVs
    /// skipped).
    static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        let head = Array(bytes.prefix(16))
        let known = min(head.count, signature.count)
        guard head[..<known].elementsEqual(signature[..<known]) else { return .invalid("the connection did not begin with a PROXY v2 header") }
        guard head.count == 16 else { return .incomplete }
        guard head[12] >> 4 == 2 else { return .invalid("PROXY protocol version \(head[12] >> 4), not 2") }
        let command = head[12] & 0x0F
        guard command <= 1 else { return .invalid("PROXY command \(command) is neither LOCAL nor PROXY") }
        let length = 16 + (Int(head[14]) << 8 | Int(head[15]))
        guard bytes.count >= length else { return .incomplete }
        let addressBytes: Int
        switch head[13] >> 4 {
        case 1 where command == 1: addressBytes = 4
        case 2 where command == 1: addressBytes = 16
        default: return .header(source: nil, length: length)
        }
        // Source and destination addresses, then their ports.
        guard length - 16 >= 2 * addressBytes + 4 else { return .invalid("a PROXY v2 header too short for its addresses") }
        return .header(source: IPAddress(bytes: Array(bytes.dropFirst(16).prefix(addressBytes))), length: length)
    }

    /// Reads the header off the front of a connection from a trusted proxy, tells the pipeline
    /// who the client is (``Client``, a user event ``ConnectionGuard`` takes), and passes the
    /// bytes after it on. A connection that does not begin with a valid header is closed: a proxy
    /// configured to send one always does, and guessing would let a client pose as one.
    final class Decoder: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        /// The client a PROXY header named.
        struct Client: Sendable { var address: IPAddress }

        private var pending: ByteBuffer?
        private var done = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !done else { return context.fireChannelRead(data) }
            var bytes = unwrapInboundIn(data)
            if var pending {
                pending.writeBuffer(&bytes)
                bytes = pending
            }
            pending = nil
            switch ProxyProtocol.parse(bytes.readableBytesView) {
            case .incomplete:
                pending = bytes
            case .invalid:
                context.close(promise: nil)
            case .header(let source, let length):
                done = true
                bytes.moveReaderIndex(forwardBy: length)
                if let source { context.fireUserInboundEventTriggered(Client(address: source)) }
                if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
            }
        }
    }
}
