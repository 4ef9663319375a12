import Configuration
import Foundation
import NukeCore

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

    // MARK: Sandboxed helpers
    /// Helpers alive at most at once (HEIC, HEIF, AVIF, SVG decodes).
    public var helperPoolSize = 2
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
        "maxConnectionsPerClient", "maxConnections", "maxUploadBytes", "headerTimeout", "minimumUploadRate",
        "helperPoolSize", "helperPrewarm", "sourceDirectory", "origins", "allowedPrivateNetworks",
        "maxSourceBytes", "sourceTimeout", "maxRedirects", "signingKey", "signingSalt", "allowUnsigned",
        "defaultFormat", "defaultQuality", "cacheMaxAge", "drainDelay", "notReadyWaiting", "logFormat",
    ]

    /// The prefix of every environment variable: `THUMBNAIL_PORT`.
    public static let environmentPrefix = "thumbnail"

    /// Reads flags (`arguments`, the executable's name first) over the environment.
    /// - Throws: ``Invalid`` listing every problem.
    public static func load(arguments: [String], environment: [String: String]) throws(Invalid) -> ServiceSettings {
        var unknown: [String] = []
        let flags = Set(keys.map(flagName))
        for argument in arguments.dropFirst() where argument.hasPrefix("--") {
            let name = String(argument.split(separator: "=", maxSplits: 1)[0])
            if !flags.contains(name) { unknown.append("unknown flag \(name)") }
        }
        let secrets = SecretsSpecifier<String, String>.dynamic { key, _ in key.contains("signing") || key.contains("SIGNING") }
        let reader = ConfigReader(providers: [
            CommandLineArgumentsProvider(arguments: arguments, secretsSpecifier: secrets),
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: secrets)
                .prefixKeys(with: ConfigKey(environmentPrefix)),
        ])
        var read = Reading(config: reader, problems: unknown)
        let settings = read.settings()
        if !read.problems.isEmpty { throw Invalid(problems: read.problems) }
        return settings
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

/// One pass over the configuration, collecting problems instead of stopping at the first.
private struct Reading {
    let config: ConfigReader
    var problems: [String]

    private func raw(_ key: String) -> String? {
        if let text = config.string(forKey: ConfigKey(key), isSecret: key.hasPrefix("signing")) { return text }
        if let flag = config.bool(forKey: ConfigKey(key)) { return flag ? "true" : "false" }
        if let list = config.stringArray(forKey: ConfigKey(key)) { return list.joined(separator: ",") }
        return nil
    }

    private mutating func problem(_ key: String, _ text: String) {
        problems.append("\(ServiceSettings.flagName(key)) / \(ServiceSettings.environmentName(key)): \(text)")
    }

    mutating func int(_ key: String, _ value: inout Int, _ range: ClosedRange<Int>) {
        guard let text = raw(key) else { return }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            return problem(key, "\"\(text)\" is not a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        value = number
    }

    mutating func bool(_ key: String, _ value: inout Bool) {
        guard let text = raw(key) else { return }
        switch text.lowercased() {
        case "true", "1", "yes", "on": value = true
        case "false", "0", "no", "off": value = false
        default: problem(key, "\"\(text)\" is not true or false")
        }
    }

    mutating func hex(_ key: String) -> [UInt8]? {
        guard let text = raw(key), !text.isEmpty else { return nil }
        guard let bytes = Hex.decode(text) else {
            problem(key, "not hexadecimal (an even number of 0-9a-f digits)")
            return nil
        }
        return bytes
    }

    mutating func settings() -> ServiceSettings {
        var s = ServiceSettings()
        if let hostname = raw("hostname") {
            if hostname.isEmpty { problem("hostname", "empty") } else { s.hostname = hostname }
        }
        int("port", &s.port, 0...65535)
        int("maxDecodes", &s.maxDecodes, 1...256)
        int("maxSlowDecodes", &s.maxSlowDecodes, 1...256)
        int("maxWaiting", &s.maxWaiting, 0...100_000)
        int("maxPerClient", &s.maxPerClient, 1...100_000)
        int("maxConnectionsPerClient", &s.maxConnectionsPerClient, 1...1_000_000)
        int("maxConnections", &s.maxConnections, 1...1_000_000)
        int("maxUploadBytes", &s.maxUploadBytes, 1...(1 << 32))
        int("headerTimeout", &s.headerTimeout, 1...3600)
        int("minimumUploadRate", &s.minimumUploadRate, 1...(1 << 30))
        s.helperPoolSize = max(2, s.maxSlowDecodes + 1)
        int("helperPoolSize", &s.helperPoolSize, 1...256)
        if s.helperPoolSize < s.maxSlowDecodes {
            problem("helperPoolSize", "\(s.helperPoolSize) helpers cannot serve --max-slow-decodes \(s.maxSlowDecodes) at once")
        }
        int("helperPrewarm", &s.helperPrewarm, 0...256)
        if s.helperPrewarm > s.helperPoolSize {
            problem("helperPrewarm", "\(s.helperPrewarm) is more than the pool's \(s.helperPoolSize) helpers")
        }
        if let directory = raw("sourceDirectory"), !directory.isEmpty {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue {
                s.sourceDirectory = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
            } else {
                problem("sourceDirectory", "\(directory) is not a directory")
            }
        }
        if let list = raw("origins") {
            let hosts = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            for host in hosts where !OriginPolicy.isValidPattern(host) {
                problem("origins", "\"\(host)\" is not a host name or *.domain")
            }
            s.origins = hosts
        }
        if let list = raw("allowedPrivateNetworks") {
            for text in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty {
                if let network = IPNetwork(text) { s.allowedPrivateNetworks.append(network) } else {
                    problem("allowedPrivateNetworks", "\"\(text)\" is not an address or a network (10.0.0.0/8, fd00::/8)")
                }
            }
        }
        int("maxSourceBytes", &s.maxSourceBytes, 1...(1 << 32))
        int("sourceTimeout", &s.sourceTimeout, 1...600)
        int("maxRedirects", &s.maxRedirects, 0...20)
        s.signingKey = hex("signingKey")
        s.signingSalt = hex("signingSalt") ?? []
        bool("allowUnsigned", &s.allowUnsigned)
        if s.signingKey != nil, s.allowUnsigned {
            problem("allowUnsigned", "a signing key is configured: unsigned URLs would bypass it; drop one of the two")
        }
        if let key = s.signingKey, key.count < 16 {
            problem("signingKey", "\(key.count) bytes; use at least 16 (32 random bytes: openssl rand -hex 32)")
        }
        if let name = raw("defaultFormat") {
            if let type = ServiceSettings.outputTypes[name.lowercased()] { s.defaultFormat = type } else {
                problem("defaultFormat", "\"\(name)\" is not one of avif, jpeg, png, webp")
            }
        }
        int("defaultQuality", &s.defaultQuality, 1...100)
        int("cacheMaxAge", &s.cacheMaxAge, 0...31_536_000)
        int("drainDelay", &s.drainDelay, 0...600)
        var notReady = s.maxWaiting
        int("notReadyWaiting", &notReady, 1...100_000)
        s.notReadyWaiting = notReady
        if let format = raw("logFormat") {
            if ["text", "json"].contains(format) { s.logFormat = format } else { problem("logFormat", "\"\(format)\" is not text or json") }
        }
        return s
    }
}

/// Hexadecimal text to bytes.
enum Hex {
    static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
