import Foundation

/// Where a GET URL's image comes from, as the URL's last part says: Base64url of the source URL
/// (it may be split by `/`, as imgproxy allows), or `plain/` and the percent-encoded URL.
/// - `local:///photos/cat.jpg` — a file under the configured source directory;
/// - `https://images.example.com/cat.jpg` (or `http://`) — from an allowed origin.
enum ImageSource: Sendable, Equatable {
    case local(String)
    case remote(URL)

    struct Invalid: Error, Equatable {
        var reason: String
    }

    init(encoded: Substring) throws(Invalid) {
        let text: String
        if encoded.hasPrefix("plain/") {
            guard let decoded = String(encoded.dropFirst(6)).removingPercentEncoding else {
                throw Invalid(reason: "the plain source is not valid percent-encoding")
            }
            text = decoded
        } else {
            let joined = encoded.split(separator: "/").joined()
            guard let bytes = Base64URL.decode(Substring(joined)), let decoded = String(validating: bytes, as: UTF8.self) else {
                throw Invalid(reason: "the source is neither Base64url nor plain/…")
            }
            text = decoded
        }
        try self.init(url: text)
    }

    init(url text: String) throws(Invalid) {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Invalid(reason: "the source contains control characters")
        }
        if text.hasPrefix("local:///") {
            let name = String(text.dropFirst("local:///".count))
            let components = name.split(separator: "/", omittingEmptySubsequences: false)
            guard !name.isEmpty, !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
                throw Invalid(reason: "a local source is a relative name without empty, . or .. components")
            }
            self = .local(name)
            return
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else {
            throw Invalid(reason: "the source must be local:///name or an http(s) URL without credentials")
        }
        self = .remote(url)
    }
}
