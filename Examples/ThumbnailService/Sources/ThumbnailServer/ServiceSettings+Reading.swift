import Configuration
import Foundation

/// One pass over the configuration for ``ServiceSettings/load(arguments:environment:)``,
/// collecting problems instead of stopping at the first.
struct SettingsReading {
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

    /// A comma-separated list of addresses and networks (`10.0.0.0/8, fd00::/8, 192.0.2.7`).
    mutating func networks(_ key: String) -> [IPNetwork] {
        guard let list = raw(key) else { return [] }
        var networks: [IPNetwork] = []
        for text in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty {
            if let network = IPNetwork(text) { networks.append(network) } else {
                problem(key, "\"\(text)\" is not an address or a network (10.0.0.0/8, fd00::/8)")
            }
        }
        return networks
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
        int("maxBufferedBytes", &s.maxBufferedBytes, (1 << 20)...(1 << 40))
        if s.maxBufferedBytes < s.maxUploadBytes {
            problem("maxBufferedBytes", "\(s.maxBufferedBytes) bytes cannot hold one upload of --max-upload-bytes \(s.maxUploadBytes)")
        }
        if let directory = raw("spoolDirectory") {
            s.spoolDirectory = directory.isEmpty ? nil : directory
            if let directory = s.spoolDirectory, !FileManager.default.isWritableFile(atPath: directory) {
                problem("spoolDirectory", "\(directory) is not a folder this process can write")
            }
        }
        int("maxSpooledBytes", &s.maxSpooledBytes, 0...(1 << 44))
        s.trustedProxies = networks("trustedProxies")
        bool("proxyProtocol", &s.proxyProtocol)
        if s.proxyProtocol, s.trustedProxies.isEmpty {
            problem("proxyProtocol", "names no proxy to read it from; set --trusted-proxies too")
        }
        // Enough helpers for the slow lane's own slots and the fast lane's it may borrow (half of
        // them), and one spare.
        s.helperPoolSize = s.maxSlowDecodes + (s.maxDecodes - (s.maxDecodes + 1) / 2) + 1
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
        s.allowedPrivateNetworks = networks("allowedPrivateNetworks")
        int("maxSourceBytes", &s.maxSourceBytes, 1...(1 << 32))
        int("sourceTimeout", &s.sourceTimeout, 1...600)
        int("maxRedirects", &s.maxRedirects, 0...20)
        int("maxSourceFetches", &s.maxSourceFetches, 1...1024)
        if let directory = raw("sourceCacheDirectory"), !directory.isEmpty {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
                problem("sourceCacheDirectory", "\(directory) is not a directory")
            } else {
                s.sourceCacheDirectory = directory
            }
        }
        int("sourceCacheBytes", &s.sourceCacheBytes, (1 << 20)...(1 << 42))
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
        int("heapKeepMegabytes", &s.heapKeepMegabytes, 0...1024)
        if let format = raw("logFormat") {
            if ["text", "json"].contains(format) { s.logFormat = format } else { problem("logFormat", "\"\(format)\" is not text or json") }
        }
        return s
    }
}
