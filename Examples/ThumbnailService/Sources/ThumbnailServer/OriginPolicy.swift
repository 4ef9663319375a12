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
