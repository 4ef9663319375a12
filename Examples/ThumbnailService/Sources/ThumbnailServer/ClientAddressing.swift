import HTTPTypes
import Hummingbird

/// Who the client is, for per-client limits and the log: the connection's peer, unless the peer
/// is a trusted proxy (`--trusted-proxies`): then the right-most address of `X-Forwarded-For`
/// that is not itself a trusted proxy. Addresses left of it were written by the client and are
/// not believed; a request from anyone else has its `X-Forwarded-For` ignored. When the trusted
/// proxy spoke the PROXY protocol, the client its header named stands in for the peer.
struct ClientAddressing: RouterMiddleware {
    typealias Context = ThumbnailContext
    let trustedProxies: [IPNetwork]

    static let forwardedFor = HTTPField.Name("x-forwarded-for")!
    /// The client a trusted proxy's PROXY header named, set by ``ConnectionGuard`` (which drops a
    /// client's own copy).
    static let proxiedClient = HTTPField.Name("x-thumbnail-proxied-client")!

    func handle(_ request: Request, context: ThumbnailContext, next: (Request, ThumbnailContext) async throws -> Response) async throws -> Response {
        guard !trustedProxies.isEmpty else { return try await next(request, context) }
        var context = context
        var peer = context.peerAddress
        if isTrusted(peer), let proxied = request.headers[Self.proxiedClient] { peer = proxied }
        context.clientAddress = client(peer: peer, forwardedFor: request.headers[values: Self.forwardedFor])
        return try await next(request, context)
    }

    /// The client of a request from `peer` carrying these `X-Forwarded-For` fields (in order).
    func client(peer: String, forwardedFor fields: [String]) -> String {
        guard isTrusted(peer) else { return peer }
        let hops = fields.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            // A proxy we trust appends the address it saw: always an address. Anything else
            // came from the client; stop at the last proxy that vouched for its neighbour.
            guard let address = IPAddress(hop) else { break }
            client = address.description
            if !isTrusted(client) { break }
        }
        return client
    }

    func isTrusted(_ text: String) -> Bool {
        guard let address = IPAddress(text) else { return false }
        let candidates = [address] + (address.embeddedIPv4.map { [$0] } ?? [])
        return trustedProxies.contains { network in candidates.contains { network.contains($0) } }
    }
}
