import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore

/// Reads a GET URL's source: a file under the source directory (no escaping it by `..` or a
/// symbolic link), or an HTTP(S) origin on the allow-list, at a public address (checked after
/// DNS resolution, and the connection made to the checked address), within a size and a time
/// limit, following redirects itself so that each one is checked the same way.
struct SourceFetcher: Sendable {
    var directory: String?
    var policy: OriginPolicy
    var maxBytes: Int
    var timeout: Duration
    var maxRedirects: Int

    /// Why a source could not be read; `status` is what the service answers.
    struct Failure: Error, Equatable {
        var status: HTTPResponse.Status
        var reason: String
    }

    /// Reads `source`, its bytes reserved in `share` before they are read: a source the byte
    /// budget cannot hold now is 503 (retry), not memory the service does not have.
    func fetch(_ source: ImageSource, share: ByteBudget.Share, logger: Logger) async throws(Failure) -> Data {
        switch source {
        case .local(let name): return try readLocal(name, share: share)
        case .remote(let url): return try await fetchRemote(url, share: share, logger: logger)
        }
    }

    static let busy = Failure(status: .serviceUnavailable, reason: "busy: the service holds as many sources as its memory allows; try again")

    // MARK: - Local files

    private func readLocal(_ name: String, share: ByteBudget.Share) throws(Failure) -> Data {
        guard let directory else { throw Failure(status: .forbidden, reason: "local sources are off (no source directory configured)") }
        let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard resolved.hasPrefix(directory + "/") else {
            throw Failure(status: .forbidden, reason: "local:///\(name) leads out of the source directory")
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
              attributes[.type] as? FileAttributeType == .typeRegular else {
            throw Failure(status: .notFound, reason: "local:///\(name) is not a file in the source directory")
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size <= maxBytes else { throw Failure(status: .contentTooLarge, reason: "the source is \(size) bytes, more than the limit of \(maxBytes)") }
        guard share.grow(to: size) else { throw Self.busy }
        guard let data = FileManager.default.contents(atPath: resolved) else {
            throw Failure(status: .notFound, reason: "local:///\(name) cannot be read")
        }
        return data
    }

    // MARK: - Remote origins

    private func fetchRemote(_ first: URL, share: ByteBudget.Share, logger: Logger) async throws(Failure) -> Data {
        let deadline = ContinuousClock.now + timeout
        var url = first
        var redirects = 0
        while true {
            let (host, address) = try await check(url)
            switch try await get(url, host: host, address: address, share: share, deadline: deadline) {
            case .body(let data):
                return data
            case .redirect(let location):
                guard redirects < maxRedirects else { throw Failure(status: .badGateway, reason: "more than \(maxRedirects) redirects") }
                redirects += 1
                guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                    throw Failure(status: .badGateway, reason: "the origin redirected to an invalid location")
                }
                logger.debug("source redirect", metadata: ["to": .string(LogEscaping.escaped(next.absoluteString))])
                url = next
            }
        }
    }

    /// The host and the address to connect to, once both are allowed.
    func check(_ url: URL) async throws(Failure) -> (host: String, address: IPAddress) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty else {
            throw Failure(status: .forbidden, reason: "only http and https sources are fetched")
        }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard policy.allowsHost(bare) else { throw Failure(status: .forbidden, reason: "\(bare) is not an allowed origin") }
        let addresses: [IPAddress]
        do {
            addresses = try await Resolver.addresses(of: bare)
        } catch {
            throw Failure(status: .badGateway, reason: error.reason)
        }
        guard let first = addresses.first else { throw Failure(status: .badGateway, reason: "\(bare) has no address") }
        // Every address the name has must be allowed: a resolver answering differently next
        // time could otherwise pick a refused one. The connection goes to the first, checked.
        for address in addresses {
            if let refusal = policy.refusal(for: address) {
                throw Failure(status: .forbidden, reason: "\(bare) resolves to a refused address: \(refusal)")
            }
        }
        return (bare, first)
    }

    private enum Answer {
        case body(Data)
        case redirect(String)
    }

    private func get(_ url: URL, host: String, address: IPAddress, share: ByteBudget.Share, deadline: ContinuousClock.Instant) async throws(Failure) -> Answer {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        // Connect to the address that was checked, not to whatever a second lookup says; TLS
        // still verifies the certificate for the host name.
        if IPAddress(host) == nil { configuration.dnsOverride = [host: address.description] }
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(Int64(timeout.components.seconds)))
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let result: Result<Answer, Failure>
        do {
            result = .success(try await download(url, with: client, share: share, deadline: deadline))
        } catch let failure as Failure {
            result = .failure(failure)
        } catch is HTTPClientError where ContinuousClock.now >= deadline {
            result = .failure(Failure(status: .gatewayTimeout, reason: "the source did not arrive within \(timeout)"))
        } catch {
            result = .failure(Failure(status: .badGateway, reason: "the origin failed: \(error)"))
        }
        try? await client.shutdown()
        return try result.get()
    }

    private func download(_ url: URL, with client: HTTPClient, share: ByteBudget.Share, deadline: ContinuousClock.Instant) async throws -> Answer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Accept", value: "image/*")
        request.headers.add(name: "User-Agent", value: "ThumbnailService")
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw Failure(status: .gatewayTimeout, reason: "the source did not arrive within \(timeout)") }
        let nioDeadline = NIODeadline.now() + .nanoseconds(Int64(remaining.components.seconds) * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000)
        let response = try await client.execute(request, deadline: nioDeadline)
        if [301, 302, 303, 307, 308].contains(response.status.code) {
            guard let location = response.headers.first(name: "Location") else {
                throw Failure(status: .badGateway, reason: "the origin redirected without a location")
            }
            return .redirect(location)
        }
        guard response.status == .ok else {
            throw Failure(status: response.status.code == 404 ? .notFound : .badGateway, reason: "the origin answered \(response.status.code)")
        }
        let declared = response.headers.first(name: "Content-Length").flatMap(Int.init)
        if let declared, declared > maxBytes {
            throw Failure(status: .contentTooLarge, reason: "the source declares \(declared) bytes, more than the limit of \(maxBytes)")
        }
        if let declared, !share.grow(to: declared) { throw Self.busy }
        var data = Data()
        if let declared { data.reserveCapacity(declared) }
        for try await chunk in response.body {
            guard data.count + chunk.readableBytes <= maxBytes else {
                throw Failure(status: .contentTooLarge, reason: "the source is larger than the limit of \(maxBytes) bytes")
            }
            guard share.grow(to: data.count + chunk.readableBytes) else { throw Self.busy }
            data.append(contentsOf: chunk.readableBytesView)
            if ContinuousClock.now >= deadline { throw Failure(status: .gatewayTimeout, reason: "the source did not arrive within \(timeout)") }
        }
        return .body(data)
    }
}
