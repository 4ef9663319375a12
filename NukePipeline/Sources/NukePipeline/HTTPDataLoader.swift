import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The pipeline's loader on AsyncHTTPClient: HTTP/1.1 and HTTP/2 (negotiated by TLS ALPN), TLS
/// with the system's trust roots, redirects followed here (bounded, the first URL and each
/// redirect's target checked by ``Configuration/checkTarget`` before it is fetched, and connected
/// to at the address the check pinned), connect and read timeouts and a deadline for the whole
/// load, a cap on connections per host.
///
/// Credentials stay with their origin: a hop to another scheme, host or port is sent without
/// `Authorization`, `Cookie` and `Proxy-Authorization` (curl's and browsers' rule), unless
/// ``Configuration/headersForRedirect`` gives it some; a redirect from `https` to `http` is
/// refused unless ``Configuration/allowsInsecureRedirects``. A refused connection or a name that
/// does not resolve fails at once, naming the host, the port and the system's reason.
public final class HTTPDataLoader: DataLoading {
    /// How the loader connects.
    public struct Configuration: Sendable {
        /// Time to open a connection.
        public var connectTimeout: Duration = .seconds(10)
        /// Longest silence while reading a response.
        public var readTimeout: Duration = .seconds(30)
        /// Longest a whole load may take, redirects and body included.
        public var totalTimeout: Duration = .seconds(120)
        /// Redirects followed before the load fails.
        public var maximumRedirects = 5
        /// HTTP/1.1 connections kept per host.
        public var maximumConnectionsPerHost = 8
        /// TLS settings (trust roots, a client certificate, versions); `nil`: the system's trust
        /// roots and AsyncHTTPClient's defaults.
        public var tlsConfiguration: TLSConfiguration?
        /// Sent as `User-Agent` unless the request has one.
        public var userAgent = "NukePipeline"
        /// Called with the first URL and every redirect's target before it is fetched. Throw to
        /// refuse it: an SSRF policy refuses hosts and private addresses here. Return an address
        /// (`203.0.113.7`, `2001:db8::7`) to connect to it rather than resolve the host again, so
        /// that a resolver answering differently the second time cannot send the connection
        /// elsewhere; TLS still verifies the certificate for the host's name. `nil` (the default):
        /// the system resolves the host.
        public var checkTarget: @Sendable (URL) async throws -> String? = { _ in nil }
        /// Follow a redirect from `https` to `http` (default `false`: such a redirect fails the load).
        public var allowsInsecureRedirects = false
        /// Headers to send on a redirect's hop to another origin than the request's, in place of
        /// the credentials dropped there: called with the request's URL, the hop's target and
        /// the request's headers. Default: none.
        public var headersForRedirect: @Sendable (_ from: URL, _ to: URL, _ requestHeaders: [(name: String, value: String)])
            -> [(name: String, value: String)] = { _, _, _ in [] }

        /// The defaults.
        public init() {}
    }

    /// Why a load failed before the pipeline saw a response.
    public enum LoadError: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// More than ``Configuration/maximumRedirects`` redirects.
        case tooManyRedirects(Int)
        /// A redirect without a usable `Location`, or to a scheme other than http(s).
        case badRedirect(String)
        /// A redirect from `https` to `http`, refused (``Configuration/allowsInsecureRedirects``).
        case insecureRedirect(String)
        /// No connection could be made: the host, the port and the system's reason
        /// (`Connection refused`, a name that does not resolve).
        case cannotConnect(host: String, port: Int, reason: String)

        public var description: String {
            switch self {
            case .tooManyRedirects(let count): "more than \(count) redirects"
            case .badRedirect(let location): "a redirect to \(location.isEmpty ? "nowhere" : location), which is not an http(s) URL"
            case .insecureRedirect(let location): "a redirect from https to \(location), which is not encrypted (refused)"
            case .cannotConnect(let host, let port, let reason): "cannot connect to \(host) port \(port): \(reason)"
            }
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let client: HTTPClient
    private let ownsClient: Bool
    /// The client's settings, for the clients of pinned hops.
    private let clientConfiguration: HTTPClient.Configuration

    /// A loader with a client of its own, shut down when the loader goes away.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        clientConfiguration = Self.clientConfiguration(configuration)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        ownsClient = true
    }

    private static func clientConfiguration(_ configuration: Configuration) -> HTTPClient.Configuration {
        var config = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.readTimeout)))
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        // A refused connection or a name that does not resolve fails the load at once, rather than
        // being tried again until the connect timeout (AsyncHTTPClient's default).
        config.connectionPool.retryConnectionEstablishment = false
        config.httpVersion = .automatic
        config.decompression = .disabled
        config.tlsConfiguration = configuration.tlsConfiguration
        return config
    }

    /// A loader on the caller's client (its redirect setting should be `.disallow`: the loader
    /// follows redirects itself, to check each target). The caller shuts it down.
    public init(client: HTTPClient, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.client = client
        clientConfiguration = Self.clientConfiguration(configuration)
        ownsClient = false
    }

    deinit {
        if ownsClient {
            // `shutdown(queue:)` keeps the client alive until its connections have closed.
            client.shutdown(queue: .global()) { _ in }
        }
    }

    public func loadData(for request: DataLoadRequest,
                         onResponse: (DataLoadResponse) throws -> Void,
                         onData: (Data) throws -> Void) async throws {
        let deadline = NIODeadline.now() + TimeAmount(configuration.totalTimeout)
        let first = request.http.url
        var url = first
        var redirects = 0
        while true {
            // Credentials only for the request's own origin; another origin gets what the app chooses.
            var sent = request.http.headers
            if ResponseIdentities.origin(of: url) != ResponseIdentities.origin(of: first) {
                sent.removeAll { ResponseIdentities.credentialHeaderNames.contains($0.name.lowercased()) }
                sent += configuration.headersForRedirect(first, url, request.http.headers)
            }
            var headers = HTTPHeaders(sent.map { ($0.name, $0.value) })
            if !headers.contains(name: "User-Agent") { headers.add(name: "User-Agent", value: configuration.userAgent) }
            if let resume = request.resume {
                headers.replaceOrAdd(name: "Range", value: "bytes=\(resume.offset)-")
                headers.replaceOrAdd(name: "If-Range", value: resume.validator)
            }
            let outgoing = try HTTPClient.Request(url: url, method: .GET, headers: headers)
            let pinned = try await configuration.checkTarget(url)
            let hop = url
            let next = try await withClient(for: url, pinnedTo: pinned) { client -> URL? in
                let delegate = StreamingDelegate()
                let task = client.execute(request: outgoing, delegate: delegate, deadline: deadline)
                // However this ends: the read held back for a part is let go, and the request ends.
                defer {
                    delegate.end()
                    task.cancel()
                }
                var events = delegate.events.makeAsyncIterator()
                let first: StreamingDelegate.Event?
                do { first = try await events.next() } catch { throw Self.connectionFailure(error, url: hop) ?? error }
                guard case .head(let head)? = first else { throw CancellationError() }
                let code = Int(head.status.code)
                if [301, 302, 303, 307, 308].contains(code) {
                    let location = head.headers.first(name: "Location") ?? ""
                    guard let next = URL(string: location, relativeTo: url)?.absoluteURL,
                          let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                        throw LoadError.badRedirect(location)
                    }
                    if url.scheme?.lowercased() == "https", scheme == "http", !configuration.allowsInsecureRedirects {
                        throw LoadError.insecureRedirect(next.absoluteString)
                    }
                    return next
                }
                try onResponse(DataLoadResponse(statusCode: code, headers: head.headers.map { ($0.name, $0.value) }, url: url))
                while let event = try await events.next() {
                    guard case .body(let buffer) = event else { continue }
                    delegate.taken(buffer.readableBytes)
                    try onData(Data(buffer.readableBytesView))
                }
                if Task.isCancelled { throw CancellationError() }
                return nil
            }
            guard let next else { return }
            redirects += 1
            guard redirects <= configuration.maximumRedirects else { throw LoadError.tooManyRedirects(configuration.maximumRedirects) }
            url = next
        }
    }

    /// Runs `body` with the loader's client, or, for a hop pinned to an address, with a client of
    /// its own that connects there (AsyncHTTPClient's `dnsOverride` is a client's setting), shut
    /// down when the hop ends, however it ends.
    private func withClient<T>(for url: URL, pinnedTo address: String?, _ body: (HTTPClient) async throws -> T) async throws -> T {
        guard let address, let host = url.host, host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) != address else {
            return try await body(client)
        }
        var config = clientConfiguration
        config.dnsOverride = [host: address]
        let pinned = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        let result: Result<T, any Error>
        do { result = .success(try await body(pinned)) } catch { result = .failure(error) }
        try? await pinned.shutdown()
        return try result.get()
    }
}

/// A response as AsyncHTTPClient's delegate API hands it over: the head, then every body part as
/// it is read, ahead of the error that ends a connection cut short.
///
/// AsyncHTTPClient drops the body parts it holds when a connection fails (its async body
/// sequence, and its own buffer behind a delegate that has not taken the last part): a 10 MB
/// download cut at 90% on loopback kept as little as 60% of the bytes that had arrived, for the
/// resume to fetch again. So parts are taken as they come, into this delegate's queue, and the
/// client's reads are held back only while the consumer is ``bufferLimit`` bytes behind. While a
/// read is held back, what the client has read from the socket stays in its own buffer, and is
/// lost if the connection ends then: a resume asks for those bytes again. That bounds the queue
/// of a consumer that falls behind a fast origin.
final class StreamingDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    enum Event: Sendable {
        case head(HTTPResponseHead)
        case body(ByteBuffer)
    }

    /// Bytes read ahead of the consumer before the client's reads wait for it.
    static let bufferLimit = 4 << 20

    let events: AsyncThrowingStream<Event, any Error>
    private let continuation: AsyncThrowingStream<Event, any Error>.Continuation
    /// Bytes queued for the consumer; the read held back while they are over the limit (at most
    /// one: the client reads no further until it is let go); whether the consumer has gone.
    private let state = Mutex<(queued: Int, pending: EventLoopPromise<Void>?, ended: Bool)>((0, nil, false))

    init() {
        (events, continuation) = AsyncThrowingStream.makeStream()
        continuation.onTermination = { [weak self] _ in self?.end() }
    }

    /// The consumer has taken a part of `count` bytes.
    func taken(_ count: Int) {
        state.withLock { state -> EventLoopPromise<Void>? in
            state.queued -= count
            return state.queued <= Self.bufferLimit ? state.pending.take() : nil
        }?.succeed()
    }

    /// The consumer has gone: nothing is held back any more.
    func end() {
        state.withLock { state in
            state.ended = true
            return state.pending.take()
        }?.succeed()
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        continuation.yield(.head(head))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let promise = task.eventLoop.makePromise(of: Void.self)
        let holds = state.withLock { state in
            state.queued += buffer.readableBytes
            guard !state.ended, state.queued > Self.bufferLimit else { return false }
            state.pending = promise
            return true
        }
        continuation.yield(.body(buffer))
        if !holds { promise.succeed() }
        return promise.futureResult
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        continuation.finish(throwing: error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        continuation.finish()
    }
}

extension HTTPDataLoader {
    /// The error that names what a failed connection attempt met, or `nil` for other errors.
    static func connectionFailure(_ error: any Error, url: URL) -> LoadError? {
        let host = url.host ?? "", port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        func reason(_ errno: Int32) -> String { String(cString: strerror(errno)) }
        switch error {
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first {
                if let io = failure.error as? IOError { return .cannotConnect(host: host, port: port, reason: reason(io.errnoCode)) }
                return .cannotConnect(host: host, port: port, reason: String(describing: failure.error))
            }
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return .cannotConnect(host: host, port: port, reason: "the name does not resolve")
            }
            return .cannotConnect(host: host, port: port, reason: "no address to connect to")
        case let error as IOError:
            return .cannotConnect(host: host, port: port, reason: reason(error.errnoCode))
        case is SocketAddressError:
            return .cannotConnect(host: host, port: port, reason: "the name does not resolve")
        default:
            return nil
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
