import Foundation

/// Loads the bytes of an HTTP request: the pipeline's ``HTTPDataLoader`` on AsyncHTTPClient, or a
/// user's own (files, S3, a test double).
///
/// A loader reports the response head once, then the body in pieces, in order, from the task that
/// called it; it stops when that task is cancelled, and throws to fail. It does not buffer the
/// body: the pipeline counts, limits and keeps the bytes.
public protocol DataLoading: Sendable {
    /// Sends `request` and reports what comes back.
    ///
    /// - Parameters:
    ///   - request: what to load: the request, and the range to resume from.
    ///   - onResponse: called once with the final response head (after any redirects); it throws
    ///     to refuse the response (a status or size the pipeline does not accept), which ends the load.
    ///   - onData: called with each piece of the body; it throws to stop the load.
    func loadData(for request: DataLoadRequest,
                  onResponse: (DataLoadResponse) throws -> Void,
                  onData: (Data) throws -> Void) async throws
}

/// What the pipeline asks a loader for.
public struct DataLoadRequest: Sendable {
    /// The request as the user described it.
    public var http: HTTPRequestDescription
    /// Resume a partial download: ask for the bytes from `offset` on, and only if the resource
    /// still has this validator (`Range` with `If-Range`); a loader that cannot ignores it and
    /// the pipeline accepts the whole body (status 200).
    public var resume: (offset: Int64, validator: String)?

    /// Creates a load request.
    public init(http: HTTPRequestDescription, resume: (offset: Int64, validator: String)? = nil) {
        self.http = http
        self.resume = resume
    }
}

/// The head of a response.
public struct DataLoadResponse: Sendable {
    /// The HTTP status (200 for a loader that is not HTTP).
    public var statusCode: Int
    /// The response headers, names as received.
    public var headers: [(name: String, value: String)]
    /// The URL the body came from (after redirects).
    public var url: URL?

    /// Creates a response head.
    public init(statusCode: Int, headers: [(name: String, value: String)] = [], url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `Content-Length`, when given.
    public var contentLength: Int64? { header("Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }

    /// A `206` answer's `Content-Range: bytes FIRST-LAST/TOTAL` (TOTAL `nil` for `*`); `nil` when
    /// it has none or it does not parse.
    var contentRange: (first: Int64, last: Int64, total: Int64?)? {
        guard let value = header("Content-Range")?.trimmingCharacters(in: .whitespaces), value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bounds = parts[0].split(separator: "-", maxSplits: 1).map { Int64($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, bounds.count == 2, let first = bounds[0], let last = bounds[1], first >= 0, last >= first else { return nil }
        let total = Int64(parts[1].trimmingCharacters(in: .whitespaces))
        if parts[1] != "*", total == nil || total! <= last { return nil }
        return (first, last, total)
    }
}
