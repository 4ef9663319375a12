import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NukePipeline

/// Reads a GET URL's source: a file under the source directory (no escaping it by `..` or a
/// symbolic link), or an HTTP(S) origin through NukePipeline.
///
/// An origin's source is loaded by the pipeline, so that concurrent requests for one source share
/// one download, and a source disk cache (when configured) spares the origin. The pipeline's
/// loader is the SSRF policy: a host on the allow-list, every address it resolves to public (or
/// in an allowed network), the connection made to the checked address, and each redirect checked
/// the same way before it is fetched; within a size and a time limit, its bytes reserved in the
/// byte budget as they arrive.
final class SourceFetcher: Sendable {
    let directory: String?
    let policy: OriginPolicy
    let maxBytes: Int
    let timeout: Duration
    /// The origins' pipeline: its own, never the shared one (its loader is this policy's).
    let pipeline: ImagePipeline

    /// Why a source could not be read; `status` is what the service answers.
    struct Failure: Error, Equatable {
        var status: HTTPResponse.Status
        var reason: String
    }

    /// - Parameters:
    ///   - budget: where a download's bytes are reserved while it runs (``OriginLoader``);
    ///   - cache: the source disk cache, if any;
    ///   - maxConcurrentFetches: origin downloads at once (more wait their turn).
    init(directory: String?, policy: OriginPolicy, maxBytes: Int, timeout: Duration, maxRedirects: Int,
         budget: ByteBudget, cache: DataCache? = nil, maxConcurrentFetches: Int = 16) {
        self.directory = directory
        self.policy = policy
        self.maxBytes = maxBytes
        self.timeout = timeout
        var http = HTTPDataLoader.Configuration()
        http.connectTimeout = min(.seconds(5), timeout)
        http.readTimeout = timeout
        http.totalTimeout = timeout
        http.maximumRedirects = maxRedirects
        http.userAgent = "ThumbnailService"
        http.checkTarget = { [policy] url in try await policy.check(url).address.description }
        var configuration = ImagePipeline.Configuration(
            dataLoader: OriginLoader(http: HTTPDataLoader(configuration: http), budget: budget), imageCache: nil, dataCache: cache)
        configuration.maximumResponseSize = Int64(maxBytes)
        // The decode sniffs the bytes as an upload's are (64 KiB, an SVG's prolog included) and
        // answers 415; the pipeline's 4 KiB sniff would refuse a long SVG prolog.
        configuration.validatesContent = false
        // Bytes kept for resuming, or responses kept by HTTP's rules, would be memory outside
        // the byte budget: the source cache is on disk.
        configuration.isResumableDataEnabled = false
        configuration.httpCache = nil
        // The lanes and their admission bound the work; origins are the operator's own.
        configuration.rateLimit = nil
        configuration.maximumConcurrentDataLoads = maxConcurrentFetches
        pipeline = ImagePipeline(configuration: configuration)
    }

    /// Reads `source`, its bytes reserved in `share` before they are kept: a source the byte
    /// budget cannot hold now is 503 (retry), not memory the service does not have.
    /// With `reload`, the source cache is not read (its entry is replaced).
    func fetch(_ source: ImageSource, share: ByteBudget.Share, logger: Logger, reload: Bool = false) async throws(Failure) -> Data {
        switch source {
        case .local(let name): return try readLocal(name, share: share)
        case .remote(let url):
            let data = try await fetchRemote(url, logger: logger, reload: reload)
            guard share.grow(to: data.count) else { throw Self.busy }
            return data
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

    private func fetchRemote(_ url: URL, logger: Logger, reload: Bool) async throws(Failure) -> Data {
        // The host is checked before the cache too: one taken off the allow-list is not served
        // from what was cached while it was on it.
        let host = url.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) ?? ""
        guard policy.allowsHost(host) else { throw Failure(status: .forbidden, reason: "\(host) is not an allowed origin") }
        var request = Self.request(for: url)
        if reload { request.options.insert(.reloadIgnoringCachedData) }
        let started = ContinuousClock.now
        let data: Data
        do {
            (data, _) = try await pipeline.data(for: request)
        } catch let error as ImagePipeline.Error {
            let failure = failure(for: error, elapsed: ContinuousClock.now - started)
            logger.debug("source failed", metadata: ["source": .string(LogEscaping.escaped(url.absoluteString)),
                                                     "reason": .string(LogEscaping.escaped(failure.reason))])
            throw failure
        } catch {
            throw Failure(status: .serviceUnavailable, reason: "the fetch was cancelled")
        }
        // A cache written under a larger limit holds sources over today's.
        guard data.count <= maxBytes else { throw Self.tooLarge(maxBytes) }
        return data
    }

    /// The pipeline's request for an origin's source (its keys are the source cache's).
    private static func request(for url: URL) -> ImageRequest {
        ImageRequest(http: HTTPRequestDescription(url: url, headers: [("Accept", "image/*")]))
    }

    /// `true` when the source cache holds `source` now.
    func isCached(_ source: ImageSource) -> Bool {
        guard case .remote(let url) = source else { return false }
        return pipeline.cache.containsData(for: Self.request(for: url))
    }

    /// Removes `source` from the source cache.
    func evict(_ source: ImageSource) {
        guard case .remote(let url) = source else { return }
        pipeline.cache.removeCachedData(for: Self.request(for: url))
    }

    static func tooLarge(_ limit: Int) -> Failure {
        Failure(status: .contentTooLarge, reason: "the source is larger than the limit of \(limit) bytes")
    }

    /// The answer for what the pipeline threw: the policy's and the budget's own failures as
    /// they were, 404 for the origin's, 413 over the size limit, 504 past the time limit, 502
    /// for the rest of what an origin can do wrong.
    func failure(for error: ImagePipeline.Error, elapsed: Duration) -> Failure {
        switch error {
        case .statusCode(404, _): return Failure(status: .notFound, reason: "the origin answered 404")
        case .statusCode(let code, _): return Failure(status: .badGateway, reason: "the origin answered \(code)")
        case .responseTooLarge: return Self.tooLarge(maxBytes)
        case .emptyResponse: return Failure(status: .badGateway, reason: "the origin sent an empty body")
        case .dataLoadingFailed(let cause as Failure): return cause
        case .dataLoadingFailed(let cause as HTTPDataLoader.LoadError): return Failure(status: .badGateway, reason: cause.description)
        case .dataLoadingFailed(let cause as HTTPClientError)
            where elapsed >= timeout || [.deadlineExceeded, .readTimeout, .connectTimeout].contains(cause):
            return Failure(status: .gatewayTimeout, reason: "the source did not arrive within \(timeout)")
        case .dataLoadingFailed(let cause): return Failure(status: .badGateway, reason: "the origin failed: \(cause)")
        default: return Failure(status: .badGateway, reason: "\(error)")
        }
    }
}

/// The origins' loader: NukePipeline's HTTP loader, whose target check is the SSRF policy, with
/// each download's bytes reserved in the byte budget as they arrive (one reservation for a
/// download however many requests share it); over the budget, the download stops (503).
struct OriginLoader: DataLoading {
    let http: HTTPDataLoader
    let budget: ByteBudget

    func loadData(for request: DataLoadRequest, onResponse: (DataLoadResponse) throws -> Void, onData: (Data) throws -> Void) async throws {
        let share = ByteBudget.Share(budget)
        defer { share.release() }
        var received = 0
        try await http.loadData(for: request, onResponse: { response in
            // The size limit first (413), then the budget (503).
            try onResponse(response)
            if let declared = response.contentLength, !share.grow(to: Int(clamping: declared)) { throw SourceFetcher.busy }
        }, onData: { chunk in
            received += chunk.count
            guard share.grow(to: received) else { throw SourceFetcher.busy }
            try onData(chunk)
        })
    }
}

extension OriginPolicy {
    /// The host and the address to connect to, once both are allowed.
    func check(_ url: URL) async throws(SourceFetcher.Failure) -> (host: String, address: IPAddress) {
        typealias Failure = SourceFetcher.Failure
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty else {
            throw Failure(status: .forbidden, reason: "only http and https sources are fetched")
        }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard allowsHost(bare) else { throw Failure(status: .forbidden, reason: "\(bare) is not an allowed origin") }
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
            if let refusal = refusal(for: address) {
                throw Failure(status: .forbidden, reason: "\(bare) resolves to a refused address: \(refusal)")
            }
        }
        return (bare, first)
    }
}
