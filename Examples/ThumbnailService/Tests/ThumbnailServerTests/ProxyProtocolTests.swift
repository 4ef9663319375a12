import Foundation
import Logging
import Synchronization
import Testing
@testable import ThumbnailServer

/// HAProxy's PROXY protocol v2 from a trusted proxy: the header's source address is the client.
@Suite struct ProxyProtocolTests {
    /// A version 2 header: `command` 1 (PROXY) or 0 (LOCAL), `family` 1 (IPv4) or 2 (IPv6), the
    /// addresses and ports, and `extra` bytes of TLVs.
    static func header(command: UInt8 = 1, family: UInt8 = 1, source: [UInt8], destination: [UInt8], extra: [UInt8] = []) -> [UInt8] {
        let body = source + destination + [0x1F, 0x90, 0x00, 0x50] + extra
        return ProxyProtocol.signature + [0x20 | command, family << 4 | 1, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    @Test func headersAreRead() {
        let v4 = Self.header(source: [203, 0, 113, 7], destination: [10, 0, 0, 1], extra: [0x04, 0x00, 0x01, 0x41])
        #expect(ProxyProtocol.parse(v4 + Array("GET /".utf8)) == .header(source: IPAddress("203.0.113.7"), length: 32))
        let v6 = Self.header(family: 2, source: IPAddress("2001:db8::7")!.bytes, destination: IPAddress("::1")!.bytes)
        #expect(ProxyProtocol.parse(v6) == .header(source: IPAddress("2001:db8::7"), length: 52))
        // LOCAL: the proxy's own check; the peer stands for itself.
        #expect(ProxyProtocol.parse(Self.header(command: 0, source: [1, 2, 3, 4], destination: [5, 6, 7, 8])) == .header(source: nil, length: 28))
    }

    @Test func partsAndForgeries() {
        let v4 = Self.header(source: [203, 0, 113, 7], destination: [10, 0, 0, 1])
        for cut in [1, 11, 15, 16, 27] { #expect(ProxyProtocol.parse(v4.prefix(cut)) == .incomplete, "\(cut) bytes") }
        #expect(ProxyProtocol.parse(Array("GET / HTTP/1.1\r\n".utf8)) == .invalid("the connection did not begin with a PROXY v2 header"))
        #expect(ProxyProtocol.parse(Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n".utf8)) == .invalid("the connection did not begin with a PROXY v2 header"))
        var version1 = v4
        version1[12] = 0x11
        #expect(ProxyProtocol.parse(version1) == .invalid("PROXY protocol version 1, not 2"))
        var command = v4
        command[12] = 0x2F
        #expect(ProxyProtocol.parse(command) == .invalid("PROXY command 15 is neither LOCAL nor PROXY"))
        // IPv6 declared, IPv4's length given.
        var family = v4
        family[13] = 0x21
        #expect(ProxyProtocol.parse(family) == .invalid("a PROXY v2 header too short for its addresses"))
    }

    @Test func proxyProtocolNeedsTrustedProxies() throws {
        #expect(throws: ServiceSettings.Invalid.self) {
            _ = try ServiceSettings.load(arguments: ["ThumbnailService", "--proxy-protocol"], environment: [:])
        }
        let settings = try ServiceSettings.load(arguments: ["ThumbnailService"], environment: ["THUMBNAIL_PROXY_PROTOCOL": "1", "THUMBNAIL_TRUSTED_PROXIES": "127.0.0.1"])
        #expect(settings.proxyProtocol)
    }

    /// Through the server: the client the header names is the one logged (a field of the same
    /// name the client wrote is dropped); a trusted peer that sends no header is cut off.
    @Test func theServerTakesTheClientFromTheHeader() async throws {
        var settings = HTTPDialectTests.settings()
        settings.trustedProxies = [IPNetwork("127.0.0.1")!]
        settings.proxyProtocol = true
        let lines = LogLines()
        var logger = Logger(label: "proxy-test") { _ in lines }
        logger.logLevel = .info
        try await withServer(settings, logger: logger) { _, port throws in
            let request = "POST /thumbnail HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nx-thumbnail-proxied-client: 6.6.6.6\r\n\r\n"
            let proxied = Self.header(source: [203, 0, 113, 7], destination: [127, 0, 0, 1]) + Array(request.utf8)
            let exchange = try await RawConnection.exchange(port: port, send: [Data(proxied)], until: "empty upload")
            #expect(exchange.text.hasPrefix("HTTP/1.1 400"), "\(exchange.text.prefix(200))")
            #expect(lines.clients == ["203.0.113.7"])
            let bare = try await RawConnection.exchange(port: port, send: [Data("GET /health HTTP/1.1\r\nHost: test\r\n\r\n".utf8)])
            #expect(bare.text.isEmpty)
            #expect(bare.ended == .closedByServer)
        }
    }
}

/// The `client` of every `thumbnail` log line.
final class LogLines: LogHandler, Sendable {
    private let recorded = Mutex<[String]>([])
    var clients: [String] { recorded.withLock { $0 } }

    var metadata: Logger.Metadata { get { [:] } set {} }
    var logLevel: Logger.Level { get { .info } set {} }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? { get { nil } set {} }

    func log(event: LogEvent) {
        guard event.message == "thumbnail", case .string(let client)? = event.metadata?["client"] else { return }
        recorded.withLock { $0.append(client) }
    }
}
