#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ThumbnailServer

/// HTTP as clients speak it, over a raw socket (an HTTP client library would hide what is
/// tested): HTTP/1.0, `Expect: 100-continue`, and answers made before a body is read.
@Suite struct HTTPDialectTests {
    /// Idle deadlines far beyond the socket's read timeout: a connection the server leaves open
    /// shows as a read that timed out, not as a close at the deadline.
    static func settings() -> ServiceSettings {
        var settings = ServiceSettings()
        settings.headerTimeout = 600
        return settings
    }

    @Test func http10IsAnsweredAndClosed() async throws {
        try await withServer(Self.settings()) { _, port throws in
            let exchange = try await RawConnection.exchange(port: port, send: [Data("GET /health HTTP/1.0\r\n\r\n".utf8)])
            #expect(exchange.text.hasPrefix("HTTP/1.1 200"))
            #expect(exchange.text.lowercased().contains("connection: close"))
            #expect(exchange.text.hasSuffix("ok\n"))
            #expect(exchange.ended == .closedByServer)
        }
    }

    @Test func http10KeepAliveStaysOpenAndSaysSo() async throws {
        try await withServer(Self.settings()) { _, port throws in
            func request(_ id: String) -> String { "GET /health HTTP/1.0\r\nConnection: keep-alive\r\nx-request-id: \(id)\r\n\r\n" }
            // The second answer on the same connection shows that the first left it open.
            let exchange = try await RawConnection.exchange(port: port, send: [Data(request("first").utf8), Data(request("second").utf8)], until: "x-request-id: second")
            let text = exchange.text.lowercased()
            #expect(text.components(separatedBy: "connection: keep-alive").count == 3, "\(exchange.text)")
            #expect(text.components(separatedBy: "http/1.1 200").count == 3)
        }
    }

    @Test func expectContinueGetsA100ThenTheAnswer() async throws {
        let jpeg = try Fixtures.jpeg
        try await withServer(Self.settings()) { _, port throws in
            let head = "POST /thumbnail?size=32&format=png HTTP/1.1\r\nHost: test\r\nContent-Length: \(jpeg.count)\r\nExpect: 100-continue\r\n\r\n"
            // The body goes only after the 100 has been read.
            let exchange = try await RawConnection.exchange(port: port, send: [Data(head.utf8), jpeg], waitBetween: "HTTP/1.1 100 Continue\r\n\r\n", until: "IEND")
            #expect(exchange.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"), "\(exchange.text.prefix(200))")
        }
    }

    @Test func expectContinueOverTheLimitGetsA413AndNoBodyIsRead() async throws {
        var settings = Self.settings()
        settings.maxUploadBytes = 1 << 20
        try await withServer(settings) { _, port throws in
            let head = "POST /thumbnail HTTP/1.1\r\nHost: test\r\nContent-Length: \(4 << 20)\r\nExpect: 100-continue\r\n\r\n"
            let exchange = try await RawConnection.exchange(port: port, send: [Data(head.utf8)])
            #expect(exchange.text.hasPrefix("HTTP/1.1 413"), "\(exchange.text.prefix(200))")
            #expect(!exchange.text.contains("100 Continue"))
            #expect(exchange.ended == .closedByServer)
        }
    }

    /// A body the byte budget cannot hold now: 503 with Retry-After, answered from the head alone
    /// (the raw client never sends the body), the connection closed.
    @Test func aBodyBeyondTheByteBudgetIs503BeforeItIsRead() async throws {
        var settings = Self.settings()
        settings.maxBufferedBytes = 1 << 20
        settings.maxUploadBytes = 8 << 20
        settings.spoolDirectory = nil
        try await withServer(settings) { server, port throws in
            let head = "POST /thumbnail HTTP/1.1\r\nHost: test\r\nContent-Length: \(2 << 20)\r\n\r\n"
            let exchange = try await RawConnection.exchange(port: port, send: [Data(head.utf8)])
            #expect(exchange.text.hasPrefix("HTTP/1.1 503"), "\(exchange.text.prefix(200))")
            #expect(exchange.text.lowercased().contains("retry-after: 1"))
            #expect(exchange.ended == .closedByServer)
            #expect(server.thumbnailer.budget.reserved == 0)
        }
    }

    /// An upload the memory budget cannot hold goes to the spool: whole when its length is
    /// declared, from the chunk that did not fit when it is not; both are answered, and the
    /// memory and disk they took are returned. A spool too small for it is 503, unread.
    @Test func uploadsBeyondTheMemoryBudgetAreSpooled() async throws {
        let jpeg = try Fixtures.jpeg
        var settings = Self.settings()
        settings.maxBufferedBytes = jpeg.count / 3
        try await withServer(settings) { server, port throws in
            let head = "POST /thumbnail?size=32&format=png HTTP/1.1\r\nHost: test\r\nContent-Length: \(jpeg.count)\r\n\r\n"
            let declared = try await RawConnection.exchange(port: port, send: [Data(head.utf8), jpeg], until: "IEND")
            #expect(declared.text.hasPrefix("HTTP/1.1 200"), "\(declared.text.prefix(200))")
            // Chunked: the first chunk fits in memory, the second does not.
            let (first, half) = (jpeg.count / 6, jpeg.count / 2)
            func chunk(_ part: Data) -> Data { Data((String(part.count, radix: 16) + "\r\n").utf8) + part + Data("\r\n".utf8) }
            let chunkedHead = "POST /thumbnail?size=32&format=png HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
            let chunked = try await RawConnection.exchange(port: port, send: [Data(chunkedHead.utf8) + chunk(jpeg.prefix(first)),
                                                                            chunk(jpeg.dropFirst(first).prefix(half)),
                                                                            chunk(jpeg.dropFirst(first + half)) + Data("0\r\n\r\n".utf8)],
                                                           until: "IEND")
            #expect(chunked.text.hasPrefix("HTTP/1.1 200"), "\(chunked.text.prefix(200))")
            #expect(server.thumbnailer.budget.reserved == 0)
            #expect(server.thumbnailer.spool?.budget.reserved == 0)
        }
        settings.maxSpooledBytes = jpeg.count / 2
        try await withServer(settings) { server, port throws in
            let head = "POST /thumbnail HTTP/1.1\r\nHost: test\r\nContent-Length: \(jpeg.count)\r\n\r\n"
            let exchange = try await RawConnection.exchange(port: port, send: [Data(head.utf8)])
            #expect(exchange.text.hasPrefix("HTTP/1.1 503"), "\(exchange.text.prefix(200))")
            #expect(exchange.ended == .closedByServer)
            #expect(server.thumbnailer.spool?.budget.reserved == 0)
        }
    }

    /// A JPEG whose frame header is followed by `segments` comment segments of 65,533 bytes each
    /// (then, with `duplicateFrame`, its frame header a second time, which libjpeg refuses: "two
    /// SOF markers", and as many comments again): an upload far larger than the image it decodes to.
    static func paddedJPEG(segments: Int, duplicateFrame: Bool = false) throws -> Data {
        let jpeg = try Fixtures.jpeg
        var offset = 2
        while jpeg[offset + 1] != 0xC0 { offset += 2 + Int(jpeg[offset + 2]) << 8 + Int(jpeg[offset + 3]) }
        let frameEnd = offset + 2 + Int(jpeg[offset + 2]) << 8 + Int(jpeg[offset + 3])
        var padded = jpeg.prefix(frameEnd)
        let comment = Data([0xFF, 0xFE, 0xFF, 0xFF]) + Data(repeating: 0x20, count: 65_533)
        for _ in 0..<segments { padded += comment }
        if duplicateFrame {
            padded += jpeg[offset..<frameEnd]
            for _ in 0..<segments { padded += comment }
        }
        return padded + jpeg.dropFirst(frameEnd)
    }

    /// An HTTP/1.1 chunked body of `data` in pieces of `size` bytes; `ends`: with its last chunk.
    static func chunked(_ data: Data, size: Int = 256 << 10, ends: Bool = true) -> [Data] {
        var parts = stride(from: 0, to: data.count, by: size).map { start in
            let part = data[(data.startIndex + start)..<min(data.endIndex, data.startIndex + start + size)]
            return Data((String(part.count, radix: 16) + "\r\n").utf8) + part + Data("\r\n".utf8)
        }
        if ends { parts.append(Data("0\r\n\r\n".utf8)) }
        return parts
    }

    /// A JPEG upload of 4.2 MB decodes to 64 × 48 pixels: with a memory budget of 3 MiB and no
    /// spool it could not be held, and it is answered 200 because it is decoded as it arrives
    /// (the budget holding the decode and a piece, not the upload). The budget is whole again.
    @Test func uploadsAreDecodedAsTheyArrive() async throws {
        let jpeg = try Self.paddedJPEG(segments: 64)
        var settings = Self.settings()
        settings.maxBufferedBytes = 3 << 20
        settings.spoolDirectory = nil
        try await withServer(settings) { server, port throws in
            let head = Data("POST /thumbnail?size=32&format=png HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            let exchange = try await RawConnection.exchange(port: port, send: [head] + Self.chunked(jpeg), until: "IEND")
            #expect(exchange.text.hasPrefix("HTTP/1.1 200"), "\(exchange.text.prefix(200))")
            #expect(server.thumbnailer.budget.reserved == 0)
        }
    }

    /// A streamed upload's verdict comes at the piece that shows it: the second frame header in
    /// its second megabyte (past the first pieces) is answered 422 with libjpeg's reason and the connection closed,
    /// while the client has not finished its body (it never sends the last chunk: without the
    /// verdict, the exchange would end at the socket's read timeout, still open).
    @Test func aStreamedUploadFailsAtThePieceThatShowsIt() async throws {
        let jpeg = try Self.paddedJPEG(segments: 24, duplicateFrame: true)
        var settings = Self.settings()
        settings.spoolDirectory = nil
        try await withServer(settings) { server, port throws in
            let head = Data("POST /thumbnail HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            let exchange = try await RawConnection.exchange(port: port, send: [head] + Self.chunked(jpeg, ends: false))
            #expect(exchange.text.hasPrefix("HTTP/1.1 422"), "\(exchange.text.prefix(300))")
            #expect(exchange.text.contains("two SOF markers"), "\(exchange.text.prefix(300))")
            #expect(exchange.ended == .closedByServer)
            #expect(server.thumbnailer.budget.reserved == 0)
        }
    }

    /// 64 KiB of something no codec reads is enough to answer 415; the other 960 KiB are never sent.
    @Test func anUnknownFormatIs415AfterItsFirstBytes() async throws {
        try await withServer(Self.settings()) { server, port throws in
            let head = "POST /thumbnail HTTP/1.1\r\nHost: test\r\nContent-Length: \(1 << 20)\r\n\r\n"
            let exchange = try await RawConnection.exchange(port: port, send: [Data(head.utf8), Data(repeating: 0x41, count: Thumbnailer.sniffLength)])
            #expect(exchange.text.hasPrefix("HTTP/1.1 415"), "\(exchange.text.prefix(200))")
            #expect(exchange.ended == .closedByServer)
            #expect(server.thumbnailer.budget.reserved == 0)
        }
    }
}

/// One TCP connection to 127.0.0.1, driven on a thread of its own (its reads block).
enum RawConnection {
    enum Ending: Equatable { case closedByServer, stillOpen }

    struct Exchange: Sendable {
        var text: String
        var ended: Ending
    }

    /// Sends each part in turn (after the first, once `waitBetween` has been read, if given),
    /// then reads until the server closes, `until` has been read (case aside), or `readFor`
    /// passes without a byte.
    static func exchange(port: Int, send parts: [Data], waitBetween: String? = nil, until: String? = nil,
                         readFor: Duration = .seconds(20)) async throws -> Exchange {
        let payloads = parts
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try run(port: port, payloads, waitBetween: waitBetween, until: until, readFor: readFor) })
            }
            thread.start()
        }
    }

    struct Failure: Error { var reason: String }

    private static func run(port: Int, _ payloads: [Data], waitBetween: String?, until: String?, readFor: Duration) throws -> Exchange {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(reason: "socket") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: Int(readFor.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(reason: "connect") }
        var received = Data()
        func read() -> Ending? {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return .closedByServer }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .stillOpen : .closedByServer }
            received.append(contentsOf: buffer[0..<count])
            return nil
        }
        func contains(_ marker: String) -> Bool { String(decoding: received, as: UTF8.self).lowercased().contains(marker.lowercased()) }
        for (index, payload) in payloads.enumerated() {
            if index > 0, let waitBetween {
                while !contains(waitBetween) {
                    if let ending = read() { return Exchange(text: String(decoding: received, as: UTF8.self), ended: ending) }
                }
            }
            let sent = payload.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may answer and close before a later part is sent: what it said is the answer.
            if sent < 0 { break }
        }
        while true {
            if let until, contains(until) { return Exchange(text: String(decoding: received, as: UTF8.self), ended: .stillOpen) }
            if let ending = read() { return Exchange(text: String(decoding: received, as: UTF8.self), ended: ending) }
        }
    }
}
