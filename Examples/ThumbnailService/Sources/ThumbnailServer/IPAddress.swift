#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
