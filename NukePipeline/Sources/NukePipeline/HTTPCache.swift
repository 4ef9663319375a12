import Foundation
import Synchronization

/// Responses kept in memory as HTTP's caching rules allow a private cache (RFC 9111), for a
/// pipeline without a ``DataCache`` (which, as Nuke's, ignores those rules on purpose):
/// - a response is kept unless it says `no-store` (or `Vary: *`), and only when it is still fresh
///   or has a validator (`ETag`, `Last-Modified`) to check it with later;
/// - fresh for `max-age`, else until `Expires`, else for a tenth of the time since
///   `Last-Modified` (the heuristic of §4.2.2), less its `Age`; `no-cache` makes it stale at once;
/// - a fresh response is served without a request; a stale one is revalidated with
///   `If-None-Match` / `If-Modified-Since`, and a `304` serves the kept bytes and updates the kept
///   headers with the ones it sends (RFC 9111 §4.3.4: merged, none dropped, so a `no-cache` or a
///   `Vary` the `304` does not repeat still holds);
/// - responses that `Vary` are kept for the request header values they were made for;
/// - past the byte limit, the least recently used go first.
public final class HTTPCache: Sendable {
    /// A kept response.
    struct Entry: Sendable {
        var data: Data
        var etag: String?
        var lastModified: String?
        /// Seconds the response stays fresh, counted from `receivedAt` less `initialAge`.
        var lifetime: TimeInterval
        var initialAge: TimeInterval
        var receivedAt: Date
        /// Request headers the response varies on, with the values it was made for.
        var vary: [String: String]
        /// The response's headers, as the last `304` updated them.
        var headers: [(name: String, value: String)]
        var lastUse: UInt64

        func isFresh(at now: Date) -> Bool { lifetime > initialAge + now.timeIntervalSince(receivedAt) }

        /// Headers that ask the origin whether the kept bytes are still current.
        var conditionalHeaders: [(name: String, value: String)] {
            var headers: [(name: String, value: String)] = []
            if let etag { headers.append(("If-None-Match", etag)) }
            if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
            return headers
        }
    }

    /// What a lookup found.
    enum Lookup: Sendable {
        case fresh(Data)
        case stale(Entry)
        case miss
    }

    /// Bytes kept at most.
    public let byteLimit: Int
    private let state = Mutex<(entries: [String: Entry], bytes: Int, clock: UInt64)>(([:], 0, 0))

    /// A cache of up to `byteLimit` bytes of responses (default 32 MiB).
    public init(byteLimit: Int = 32 << 20) {
        self.byteLimit = byteLimit
    }

    /// Bytes and responses kept now.
    public var totalSize: (bytes: Int, count: Int) { state.withLock { ($0.bytes, $0.entries.count) } }

    /// Forgets the response kept under `key`.
    func removeResponse(forKey key: String) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.data.count }
        }
    }

    /// Forgets every response.
    public func removeAll() { state.withLock { $0 = ([:], 0, $0.clock) } }

    func lookup(_ key: String, requestHeaders: [(name: String, value: String)], now: Date = Date()) -> Lookup {
        state.withLock { state in
            guard var entry = state.entries[key],
                  entry.vary.allSatisfy({ Self.value(of: $0.key, in: requestHeaders) ?? "" == $0.value }) else { return .miss }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.isFresh(at: now) ? .fresh(entry.data) : .stale(entry)
        }
    }

    /// Keeps a `200` response if the rules allow.
    func store(_ data: Data, response: DataLoadResponse, forKey key: String, requestHeaders: [(name: String, value: String)],
               now: Date = Date()) {
        guard response.statusCode == 200, data.count <= byteLimit,
              let entry = Self.entry(data, response: response, requestHeaders: requestHeaders, now: now) else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.data.count }
            state.clock += 1
            var entry = entry
            entry.lastUse = state.clock
            state.entries[key] = entry
            state.bytes += data.count
            while state.bytes > byteLimit, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.data.count
            }
        }
    }

    /// A `304` for `entry`: the kept headers, each one the `304` sends replaced by its value
    /// (RFC 9111 §4.3.4; the framing headers excepted, §3.2), and its freshness counted again from them.
    func refresh(_ entry: Entry, response: DataLoadResponse, forKey key: String, requestHeaders: [(name: String, value: String)],
                 now: Date = Date()) {
        let framing: Set<String> = ["content-length", "content-range", "transfer-encoding", "content-encoding", "connection"]
        let updated = Set(response.headers.map { $0.name.lowercased() }).subtracting(framing)
        var merged = DataLoadResponse(statusCode: 200, headers: entry.headers.filter { !updated.contains($0.name.lowercased()) }, url: response.url)
        merged.headers += response.headers.filter { updated.contains($0.name.lowercased()) }
        // The variant stays the one it was made for, whatever the 304's request sent.
        var madeFor = requestHeaders.filter { header in !entry.vary.keys.contains(header.name.lowercased()) }
        madeFor += entry.vary.map { (name: $0.key, value: $0.value) }
        store(entry.data, response: merged, forKey: key, requestHeaders: madeFor, now: now)
    }

    private static func entry(_ data: Data, response: DataLoadResponse, requestHeaders: [(name: String, value: String)], now: Date) -> Entry? {
        let directives = CacheControl(response.header("Cache-Control"))
        guard !directives.has("no-store"), !CacheControl(value(of: "Cache-Control", in: requestHeaders)).has("no-store") else { return nil }
        let varyNames = (response.header("Vary") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        guard !varyNames.contains("*") else { return nil }
        let date = response.header("Date").flatMap(HTTPDate.parse)
        let lastModified = response.header("Last-Modified")
        let etag = response.header("ETag")
        var lifetime: TimeInterval = 0
        if directives.has("no-cache") {
            lifetime = 0
        } else if let maxAge = directives.seconds("max-age") {
            lifetime = maxAge
        } else if let expires = response.header("Expires") {
            // An invalid date (`0`) means already expired.
            lifetime = HTTPDate.parse(expires).map { $0.timeIntervalSince(date ?? now) } ?? 0
        } else if let modified = lastModified.flatMap(HTTPDate.parse) {
            lifetime = max(0, (date ?? now).timeIntervalSince(modified) / 10)
        }
        let apparentAge = max(0, date.map { now.timeIntervalSince($0) } ?? 0)
        let age = response.header("Age").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        // Stale on arrival and nothing to revalidate it with: of no use.
        guard lifetime > max(apparentAge, age) || etag != nil || lastModified != nil else { return nil }
        var vary: [String: String] = [:]
        for name in varyNames { vary[name] = value(of: name, in: requestHeaders) ?? "" }
        return Entry(data: data, etag: etag, lastModified: lastModified, lifetime: lifetime, initialAge: max(apparentAge, age),
                     receivedAt: now, vary: vary, headers: response.headers, lastUse: 0)
    }

    private static func value(of name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// The directives of a `Cache-Control` header.
struct CacheControl {
    private var directives: [String: String?] = [:]

    init(_ header: String?) {
        for part in (header ?? "").split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pair.first?.lowercased(), !name.isEmpty else { continue }
            directives[name] = pair.count == 2 ? pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : .some(nil)
        }
    }

    func has(_ name: String) -> Bool { directives[name] != nil }

    func seconds(_ name: String) -> TimeInterval? { directives[name].flatMap { $0 }.flatMap { Int($0) }.map { TimeInterval(max(0, $0)) } }
}

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", let day = Int(fields[1]), let year = Int(fields[3]),
              let month = months.firstIndex(of: fields[2].lowercased()) else { return nil }
        let time = fields[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar.date(from: DateComponents(year: year, month: month + 1, day: day, hour: time[0], minute: time[1], second: time[2]))
    }
}
