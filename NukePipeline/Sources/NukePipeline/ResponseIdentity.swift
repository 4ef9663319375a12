import Foundation
import Synchronization

/// What a response may be reused for, decided here and nowhere else: every cache (memory, disk,
/// HTTP), every join of in-flight work and the partial data kept for a resume take their keys from
/// this one type.
///
/// - The URL is normalised (``normalizedURL(_:)``): two spellings of one resource are one entry.
/// - A request that carries credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) has
///   their fingerprint in every key: its response is never served to, or joined by, a request with
///   other credentials or none. (RFC 9111 §3.5 lets a shared cache reuse some such responses; this
///   pipeline, which a server runs for many users, never does: the cost is a download per user.)
/// - A cache key has the values of the request headers the response's `Vary` names (learned from
///   the responses seen for that URL, and those the request declares in
///   ``HTTPRequestDescription/varyingHeaderNames``); `Vary: *` makes every header part of it.
/// - A join key has every header the request sends: before its response arrives nobody knows what
///   it varies on, so only requests the origin cannot tell apart share one download.
final class ResponseIdentities: Sendable {
    /// Request header names (lower-cased) that responses for a normalised URL said they vary on,
    /// for at most ``learnedLimit`` URLs, the oldest learned forgotten first.
    private let learned = Mutex(LearnedVary())
    /// How many URLs' `Vary` names are kept. Forgetting is safe: entries are stored under keys
    /// made after the response was learned, so a key made without the names misses them all and
    /// costs one download, which learns them again.
    let learnedLimit: Int

    init(learnedLimit: Int = 10_000) {
        self.learnedLimit = max(1, learnedLimit)
    }

    /// The number of URLs whose `Vary` names are kept (for tests).
    var learnedCount: Int { learned.withLock { $0.names.count } }

    /// The keys of `request`, with the `Vary` names learned so far for its URL; `customKey` (a
    /// delegate's) names the resource in the cache keys in place of its URL or `imageID`.
    func keys(for request: ImageRequest, customKey: String? = nil) -> ResponseKeys {
        switch request.resource {
        case .provider(let id, _):
            let base = "provider:" + (customKey ?? request.imageID ?? id)
            return ResponseKeys(cache: base, join: "provider:" + id, resume: "provider:" + id)
        case .http(let http):
            let url = Self.normalizedURL(http.url)
            let credential = Self.credentialFingerprint(http.headers).map { "\ncredential=" + $0 } ?? ""
            var names = learned.withLock { $0.names[url] } ?? []
            for name in http.varyingHeaderNames { names.insert(name.lowercased()) }
            let varying = names.contains("*") ? Self.allHeaders(http.headers)
                : names.sorted().map { name in "\n\(name): " + (Self.value(of: name, in: http.headers) ?? "") }.joined()
            let join = url + "\nheaders:" + Self.allHeaders(http.headers)
            return ResponseKeys(cache: (customKey ?? request.imageID ?? url) + credential + varying, join: join, resume: join)
        }
    }

    /// Remembers what a response for `request` varies on, so that later keys for its URL include
    /// those headers' values. Names are only ever added: a response that stops saying `Vary`
    /// leaves the older variants apart, which costs a download and never serves a wrong one.
    func learn(_ response: DataLoadResponse, for request: ImageRequest) {
        guard case .http(let http) = request.resource else { return }
        let names = Self.varyNames(response)
        guard !names.isEmpty else { return }
        let url = Self.normalizedURL(http.url)
        learned.withLock { $0.add(names, for: url, limit: learnedLimit) }
    }

    /// The header names a response's `Vary` lists, lower-cased.
    static func varyNames(_ response: DataLoadResponse) -> Set<String> {
        Set(response.headers.filter { $0.name.caseInsensitiveCompare("Vary") == .orderedSame }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty })
    }

    /// `url` as one resource has one spelling: no fragment, the scheme and host lower-cased, the
    /// scheme's default port dropped, an empty path as `/`. The rest (path, query) is the origin's
    /// to interpret and stays as sent.
    static func normalizedURL(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        if let host = components.percentEncodedHost { components.percentEncodedHost = host.lowercased() }
        if let port = components.port, (components.scheme == "http" && port == 80) || (components.scheme == "https" && port == 443) {
            components.port = nil
        }
        if components.percentEncodedPath.isEmpty, components.host != nil { components.percentEncodedPath = "/" }
        return components.string ?? url.absoluteString
    }

    /// The origin of `url`: its scheme, host and port (the default port made explicit).
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// Request headers that carry a user's credentials: they never leave their origin on a
    /// redirect, and never let one user's response reach another.
    static let credentialHeaderNames: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// A SHA-256 of the request's credentials, or `nil` when it carries none; the keys hold this,
    /// not the secret.
    static func credentialFingerprint(_ headers: [(name: String, value: String)]) -> String? {
        let credentials = headers.filter { credentialHeaderNames.contains($0.name.lowercased()) }
        guard !credentials.isEmpty else { return nil }
        let text = credentials.map { "\($0.name.lowercased()): \($0.value)" }.sorted().joined(separator: "\n")
        return SHA256.hex(Data(text.utf8))
    }

    /// Every header, names lower-cased and sorted, credentials as their fingerprint.
    private static func allHeaders(_ headers: [(name: String, value: String)]) -> String {
        let plain = headers.filter { !credentialHeaderNames.contains($0.name.lowercased()) }
            .map { "\n\($0.name.lowercased()): \($0.value)" }.sorted().joined()
        return plain + (credentialFingerprint(headers).map { "\ncredential=" + $0 } ?? "")
    }

    static func value(of name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// The keys of one request, as ``ResponseIdentities`` made them.
struct ResponseKeys: Sendable, Hashable {
    /// What the caches hold the response under: the normalised URL (or the request's
    /// ``ImageRequest/imageID``), the credential fingerprint, the varying headers' values.
    var cache: String
    /// What in-flight work is shared under: the normalised URL and every header sent.
    var join: String
    /// What a partial download is kept under for a resume: only the same request resumes it.
    var resume: String
}

/// URLs' learned `Vary` names in the order first learned, so the oldest can be forgotten.
struct LearnedVary: Sendable {
    var names: [String: Set<String>] = [:]
    /// URLs in the order learned; `head` is the oldest still kept (removed ones are skipped).
    private var order: [String] = []
    private var head = 0

    mutating func add(_ new: Set<String>, for url: String, limit: Int) {
        if names[url] == nil { order.append(url) }
        names[url, default: []].formUnion(new)
        while names.count > limit, head < order.count {
            names[order[head]] = nil
            head += 1
        }
        // Drop the forgotten prefix once it is as long as what is kept.
        if head > 0, head >= order.count - head {
            order.removeFirst(head)
            head = 0
        }
    }
}
