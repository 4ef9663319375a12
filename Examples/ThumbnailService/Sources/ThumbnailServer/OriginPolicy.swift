#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Which remote sources may be fetched: hosts on the allow-list, at addresses that are public
/// (checked after DNS resolution, for every address a name resolves to, and again after each
/// redirect) unless an address is inside a network configured as allowed.
struct OriginPolicy: Sendable {
    /// `images.example.com`, or `*.example.com` for any subdomain of example.com.
    var hosts: [String]
    /// Non-public networks the operator allows (an internal origin): `10.1.2.0/24`.
    var allowedNetworks: [IPNetwork]

    static func isValidPattern(_ pattern: String) -> Bool {
        let name = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        guard !name.isEmpty, name.count <= 253 else { return false }
        if IPAddress(name) != nil { return true }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    func allowsHost(_ host: String) -> Bool {
        let host = host.lowercased()
        return hosts.contains { pattern in
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
            return host == pattern
        }
    }

    /// `nil` when `address` may be connected to; otherwise why not.
    func refusal(for address: IPAddress) -> String? {
        guard let range = address.specialPurpose else { return nil }
        if allowedNetworks.contains(where: { $0.contains(address) }) { return nil }
        return "\(address) is \(range)"
    }
}

/// An IPv4 or IPv6 address, as bytes (4 or 16).
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]

    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses dotted IPv4 or IPv6 text (brackets allowed), as `inet_pton` does.
    init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = inet_ntop(family, &copy, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible or NAT64
    /// (`64:ff9b::a.b.c.d`) IPv6 address.
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        let nat64 = bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...]
        return mapped || nat64 ? IPAddress(bytes: Array(bytes[12..<16])) : nil
    }

    /// The special-purpose range (RFC 6890 and successors) the address is in, or `nil` for a
    /// public unicast address.
    var specialPurpose: String? {
        if let inner = embeddedIPv4 { return inner.specialPurpose.map { "\($0) (inside an IPv6 address)" } }
        for (network, name) in Self.special where network.contains(self) { return name }
        return nil
    }

    private static let special: [(IPNetwork, String)] = [
        ("0.0.0.0/8", "this network"), ("10.0.0.0/8", "private (10/8)"), ("100.64.0.0/10", "shared address space (CGNAT)"),
        ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local (cloud metadata lives here)"),
        ("172.16.0.0/12", "private (172.16/12)"), ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"), ("192.168.0.0/16", "private (192.168/16)"), ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"), ("203.0.113.0/24", "documentation"), ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"), ("::/128", "unspecified"), ("::1/128", "loopback"), ("::/96", "IPv4-compatible"),
        ("100::/64", "discard-only"), ("2001:db8::/32", "documentation"), ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"), ("fec0::/10", "site-local"), ("ff00::/8", "multicast"),
    ].map { (IPNetwork($0.0)!, $0.1) }
}

/// An address and a prefix length: `10.0.0.0/8`, `fd00::/8`, or one address.
struct IPNetwork: Sendable, Hashable {
    let address: IPAddress
    let prefix: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(String(first)) else { return nil }
        let bits = address.bytes.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...bits).contains(prefix) else { return nil }
            self.prefix = prefix
        } else {
            prefix = bits
        }
        self.address = address
    }

    func contains(_ other: IPAddress) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        var remaining = prefix
        for (a, b) in zip(address.bytes, other.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if a & mask != b & mask { return false }
            remaining -= 8
        }
        return true
    }
}

/// Name resolution with the system resolver (`getaddrinfo`), off Swift's cooperative threads.
enum Resolver {
    private static let queue = DispatchQueue(label: "resolver", attributes: .concurrent)

    struct Failure: Error { var reason: String }

    static func addresses(of host: String) async throws(Failure) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        let result: Result<[IPAddress], Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: resolve(host)) }
        }
        return try result.get()
    }

    private static func resolve(_ host: String) -> Result<[IPAddress], Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return .failure(Failure(reason: "\(host) does not resolve: \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            if let socketAddress = info.pointee.ai_addr {
                switch Int32(info.pointee.ai_family) {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin_addr
                        if let ip = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) }) { addresses.append(ip) }
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin6_addr
                        if let ip = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) }) { addresses.append(ip) }
                    }
                default:
                    break
                }
            }
            entry = info.pointee.ai_next
        }
        var seen: Set<IPAddress> = []
        return .success(addresses.filter { seen.insert($0).inserted })
    }
}
