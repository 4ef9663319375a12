import Crypto
import NukeCore

/// Strong validators for GET thumbnails: the same signed path, format and renderer give the same
/// bytes, so the ETag is a hash of those, known before the source is read; a matching
/// `If-None-Match` answers 304 without reading or decoding anything.
enum CacheValidation {
    /// What changes the bytes besides the URL: this service's rendering and the codec libraries
    /// linked (their names and versions).
    static let rendererVersion: String = {
        let codecs = ImageDecoderRegistry.shared.registeredCodecs.map(\.codecDescription).sorted().joined(separator: ",")
        return "thumbnail-service-1;" + codecs
    }()

    static func etag(path: Substring, format: ImageType, quality: Int, version: String = rendererVersion) -> String {
        var hash = SHA256()
        hash.update(data: Array("\(path)\n\(format.name)\n\(quality)\n\(version)".utf8))
        return "\"" + Base64URL.encode(Array(hash.finalize()).prefix(18).map { $0 }) + "\""
    }

    /// Whether `ifNoneMatch` (a list of entity tags, or `*`) matches `etag` (weak comparison, as
    /// RFC 9110 §13.1.2 asks for `If-None-Match`).
    static func matches(ifNoneMatch: String?, etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return ifNoneMatch.split(separator: ",").contains { tag in
            var tag = tag.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == wanted
        }
    }
}
