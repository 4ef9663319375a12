import Configuration
import Foundation
import NukeCore
import NukePipeline

/// Everything the service can be told at start, from command-line flags (`--max-decodes 4`) or
/// the environment (`THUMBNAIL_MAX_DECODES=4`), flags first; validated as a whole, so that a
/// deployment learns every mistake at once instead of one per restart.
public struct ServiceSettings: Sendable {
    // MARK: Listening
    public var hostname = "127.0.0.1"
    public var port = 8080

    // MARK: Lanes, slots and limits (see the README's "Two lanes")
    public var maxDecodes = 4
    public var maxSlowDecodes = 1
    public var maxWaiting = 64
    public var maxPerClient = 8
    public var maxConnectionsPerClient = 32
    public var maxConnections = 1024
    public var maxUploadBytes = 32 << 20
    public var headerTimeout = 10
    public var minimumUploadRate = 64 << 10
    /// Bytes of upload bodies and source downloads held in memory at once, across requests; a
    /// request that would go beyond it is answered 503 with `Retry-After` before its body is
    /// read. Default: a quarter of the memory limit (the container's cgroup limit, else the
    /// machine's memory), at least 64 MiB.
    public var maxBufferedBytes = ServiceSettings.defaultBufferedBytes
    /// Uploads the memory budget cannot hold are written here (unlinked files, mapped for the
    /// decode), up to `maxSpooledBytes` at once; beyond that, 503. Default: the temporary folder
    /// (`TMPDIR`, else `/tmp`). Empty: no spool.
    public var spoolDirectory: String? = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    public var maxSpooledBytes = 1 << 30
    /// Load balancers and proxies whose `X-Forwarded-For` is believed (`10.0.0.0/8`, `::1`):
    /// from them, the client is the right-most address of that header not itself a trusted proxy;
    /// from anyone else, the connection's peer. Empty: the peer, always.
    var trustedProxies: [IPNetwork] = []
    /// Trusted proxies begin each connection with a PROXY protocol v2 header (HAProxy's
    /// `send-proxy-v2`), whose source address is the client (or the next hop).
    public var proxyProtocol = false

    // MARK: Sandboxed helpers
    /// Helpers alive at most at once (HEIC, HEIF, AVIF, SVG decodes). Default: the slow lane's
    /// slots, plus the fast lane's it may borrow (half of them), plus one.
    public var helperPoolSize = 4
    /// Helpers started before the service says it is ready.
    public var helperPrewarm = 1

    // MARK: Sources of GET URLs
    /// The folder `local:///name` reads from; none: local sources are refused.
    public var sourceDirectory: String?
    /// Hosts `http(s)://` sources may come from: `images.example.com`, or `*.example.com` for its
    /// subdomains. Empty: remote sources are refused.
    public var origins: [String] = []
    /// Non-public networks origins may resolve to (an internal origin: `10.1.2.0/24`); every
    /// other loopback, private, link-local or reserved address is refused.
    var allowedPrivateNetworks: [IPNetwork] = []
    public var maxSourceBytes = 32 << 20
    /// Seconds a source may take to arrive, redirects included.
    public var sourceTimeout = 10
    public var maxRedirects = 3
    /// Origin downloads at once (NukePipeline's loading queue); concurrent requests for one
    /// source share one download.
    public var maxSourceFetches = 16
    /// A disk cache of origin sources (NukePipeline's `DataCache`: a file per source, LRU sweeps,
    /// shareable by replicas on one host); none: every miss fetches.
    public var sourceCacheDirectory: String?
    public var sourceCacheBytes = 1 << 30

    // MARK: Signing
    /// The HMAC-SHA256 key (hex, as imgproxy's `IMGPROXY_KEY`).
    public var signingKey: [UInt8]?
    /// Bytes put before the signed path (hex, as imgproxy's `IMGPROXY_SALT`).
    public var signingSalt: [UInt8] = []
    /// Accepts `unsafe` as the signature; only when no key is configured.
    public var allowUnsigned = false

    // MARK: Output and caching
    public var defaultFormat: ImageType = .webp
    public var defaultQuality = 80
    /// `Cache-Control: max-age` of GET thumbnails, in seconds.
    public var cacheMaxAge = 31_536_000

    // MARK: Operations
    /// Seconds between SIGTERM (readiness turns false) and the listener closing, so that a load
    /// balancer stops sending first; in-flight requests finish after it.
    public var drainDelay = 0
    /// Requests waiting in a lane from which `/ready` says the replica is overloaded.
    public var notReadyWaiting: Int?
    /// `text` (swift-log's key=value lines) or `json` (one object a line).
    public var logFormat = "text"
    /// Freed memory blocks up to this many MiB stay in the process's heap for the next decode
    /// (glibc's M_MMAP_THRESHOLD; M_TRIM_THRESHOLD twice it) instead of going back to the kernel
    /// and being faulted in and zeroed again: libjpeg's coefficient buffer of a progressive photograph
    /// is tens of MiB per decode. 0 leaves glibc's defaults.
    public var heapKeepMegabytes = 64

    public init() {}

    /// A configuration mistake: every problem, each naming the flag and the variable.
    public struct Invalid: Error, CustomStringConvertible {
        public var problems: [String]
        public var description: String {
            "invalid configuration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
        }
    }

    /// The keys this service reads; any other `--flag` is a mistake.
    static let keys: [String] = [
        "hostname", "port", "maxDecodes", "maxSlowDecodes", "maxWaiting", "maxPerClient",
        "maxConnectionsPerClient", "maxConnections", "maxUploadBytes", "headerTimeout", "minimumUploadRate", "maxBufferedBytes", "spoolDirectory", "maxSpooledBytes", "trustedProxies", "proxyProtocol",
        "helperPoolSize", "helperPrewarm", "sourceDirectory", "origins", "allowedPrivateNetworks",
        "maxSourceBytes", "sourceTimeout", "maxRedirects", "maxSourceFetches", "sourceCacheDirectory", "sourceCacheBytes", "signingKey", "signingSalt", "allowUnsigned",
        "defaultFormat", "defaultQuality", "cacheMaxAge", "drainDelay", "notReadyWaiting", "logFormat", "heapKeepMegabytes",
    ]

    /// The prefix of every environment variable: `THUMBNAIL_PORT`.
    public static let environmentPrefix = "thumbnail"

    /// Reads flags (`arguments`, the executable's name first) over the environment.
    /// - Throws: ``Invalid`` listing every problem.
    public static func load(arguments: [String], environment: [String: String]) throws(Invalid) -> ServiceSettings {
        var unknown: [String] = []
        let flags = keys.map(flagName)
        for argument in arguments.dropFirst() where argument.hasPrefix("--") {
            let name = String(argument.split(separator: "=", maxSplits: 1)[0])
            if !flags.contains(name) { unknown.append("unknown flag \(name)\(suggestion(for: name, among: flags))") }
        }
        // A mistyped variable would otherwise be ignored without a word, and its default used.
        let variables = keys.map(environmentName)
        let prefix = environmentPrefix.uppercased() + "_"
        for name in environment.keys.sorted() where name.uppercased().hasPrefix(prefix) && !variables.contains(name) {
            unknown.append("unknown variable \(name)\(suggestion(for: name, among: variables))")
        }
        let secrets = SecretsSpecifier<String, String>.dynamic { key, _ in key.contains("signing") || key.contains("SIGNING") }
        let reader = ConfigReader(providers: [
            CommandLineArgumentsProvider(arguments: arguments, secretsSpecifier: secrets),
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: secrets)
                .prefixKeys(with: ConfigKey(environmentPrefix)),
        ])
        var read = SettingsReading(config: reader, problems: unknown)
        let settings = read.settings()
        if !read.problems.isEmpty { throw Invalid(problems: read.problems) }
        return settings
    }

    /// ` (did you mean --max-decodes?)`: the known name fewest edits away, when it is close.
    static func suggestion(for name: String, among known: [String]) -> String {
        let scored = known.map { ($0, editDistance(name.uppercased(), $0.uppercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, best.0.count / 3) else { return "" }
        return " (did you mean \(best.0)?)"
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// A quarter of the memory this process may use (cgroup v2 `memory.max`, v1
    /// `memory.limit_in_bytes`, else physical memory), at least 64 MiB.
    static var defaultBufferedBytes: Int {
        max(64 << 20, Int(clamping: MemoryLimit.current) / 4)
    }

    /// `maxDecodes` → `--max-decodes`.
    static func flagName(_ key: String) -> String { "--" + words(key).joined(separator: "-") }
    /// `maxDecodes` → `THUMBNAIL_MAX_DECODES`.
    static func environmentName(_ key: String) -> String {
        ([environmentPrefix] + words(key)).joined(separator: "_").uppercased()
    }
    private static func words(_ key: String) -> [String] {
        var words: [String] = []
        var word = ""
        for character in key {
            if character.isUppercase, !word.isEmpty { words.append(word); word = "" }
            word.append(character.lowercased())
        }
        words.append(word)
        return words
    }

    /// The formats the service writes, by name.
    static let outputTypes: [String: ImageType] = ["webp": .webp, "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "avif": .avif]
}
