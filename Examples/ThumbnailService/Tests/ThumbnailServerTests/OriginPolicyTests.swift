import Testing
@testable import ThumbnailServer

@Suite struct OriginPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "127.8.9.10", "::1", "10.0.0.1", "10.255.255.255", "172.16.0.1", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "::", "fe80::1", "fd00::1", "fc00::1", "224.0.0.1", "ff02::1", "::ffff:127.0.0.1",
        "::ffff:169.254.169.254", "64:ff9b::a00:1", "192.0.2.1", "240.0.0.1", "255.255.255.255",
    ])
    func refusesNonPublicAddresses(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(OriginPolicy(hosts: [], allowedNetworks: []).refusal(for: address) != nil)
    }

    @Test(arguments: ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "172.32.0.1", "11.0.0.1", "::ffff:8.8.8.8"])
    func allowsPublicAddresses(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(OriginPolicy(hosts: [], allowedNetworks: []).refusal(for: address) == nil)
    }

    @Test func allowedNetworksOpenOnlyThemselves() throws {
        let policy = OriginPolicy(hosts: [], allowedNetworks: [try #require(IPNetwork("127.0.0.2/32")), try #require(IPNetwork("10.1.0.0/16"))])
        #expect(policy.refusal(for: try #require(IPAddress("127.0.0.2"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("10.1.200.3"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("127.0.0.1"))) != nil)
        #expect(policy.refusal(for: try #require(IPAddress("10.2.0.1"))) != nil)
    }

    @Test func hostAllowList() {
        let policy = OriginPolicy(hosts: ["images.example.com", "*.cdn.example.org"], allowedNetworks: [])
        #expect(policy.allowsHost("images.example.com"))
        #expect(policy.allowsHost("IMAGES.example.com"))
        #expect(policy.allowsHost("a.cdn.example.org"))
        #expect(!policy.allowsHost("cdn.example.org"))
        #expect(!policy.allowsHost("evilcdn.example.org"))
        #expect(!policy.allowsHost("images.example.com.evil.net"))
        #expect(!policy.allowsHost("example.com"))
    }
}
