import AsyncHTTPClient
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization
@testable import ThumbnailServer

/// The repository's fixtures, found from this file.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static var jpeg: Data { get throws { try Data(contentsOf: root.appendingPathComponent("Fixtures/jpeg/baseline-420.jpg")) } }
    /// A folder with `photo.jpg`, `animated.gif` (3 frames, 3 loops), and `escape.jpg`, a
    /// symbolic link to a file outside it.
    static func sourceDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnail-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try jpeg.write(to: directory.appendingPathComponent("photo.jpg"))
        try Data(contentsOf: root.appendingPathComponent("Fixtures/gif/positions-loop3.gif")).write(to: directory.appendingPathComponent("animated.gif"))
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString).jpg")
        try jpeg.write(to: outside)
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("escape.jpg"), withDestinationURL: outside)
        return directory.path
    }
}

/// Quiet loggers: tests read answers, not logs.
func quietLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .critical
    return logger
}

/// Runs a ``ThumbnailServer`` on 127.0.0.1 (an ephemeral port, no helpers) for `body`, then
/// drains it as SIGTERM would.
func withServer<T: Sendable>(_ settings: ServiceSettings, logger: Logger = quietLogger("test-server"),
                              _ body: @Sendable (ThumbnailServer, Int) async throws -> T) async throws -> T {
    var settings = settings
    settings.hostname = "127.0.0.1"
    settings.port = 0
    let server = ThumbnailServer(settings: settings, logger: logger, helpers: false)
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let group = server.makeServiceGroup(signals: []) { channel in continuation.yield(channel.localAddress?.port ?? 0) }
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        do {
            let result = try await body(server, port)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

/// What a test origin was asked, and the gates its `/gated/NAME` answers wait behind.
final class OriginLog: Sendable {
    private let state = Mutex<(counts: [String: Int], open: Set<String>, waiting: [String: [CheckedContinuation<Void, Never>]])>(([:], [], [:]))

    func count(_ path: String) -> Int { state.withLock { $0.counts[path, default: 0] } }

    fileprivate func received(_ path: String) { state.withLock { $0.counts[path, default: 0] += 1 } }

    /// Answers for `/gated/name` wait until this.
    func open(_ name: String) {
        let waiting = state.withLock { state in
            state.open.insert(name)
            return state.waiting.removeValue(forKey: name) ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    fileprivate func pass(_ name: String) async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if state.open.contains(name) { return true }
                state.waiting[name, default: []].append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// A test origin on `host` (127.0.0.2 by default: loopback, but not the server's address):
/// `/photo.jpg`, `/slow.jpg` (after `slowDelay`), `/gated/NAME` (the photo, once `log` opens
/// NAME), `/redirect?to=URL` (302), `/big` (more than any small limit); each request counted in `log`.
func withOrigin<T: Sendable>(host: String = "127.0.0.2", slowDelay: Duration = .seconds(2), log: OriginLog = OriginLog(),
                             _ body: @Sendable (Int) async throws -> T) async throws -> T {
    let jpeg = try Fixtures.jpeg
    let router = Router()
    router.middlewares.add(CountingMiddleware(log: log))
    router.get("/photo.jpg") { _, _ in Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: ByteBuffer(data: jpeg))) }
    router.get("/gated/:name") { _, context in
        await log.pass(context.parameters.get("name") ?? "")
        return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: ByteBuffer(data: jpeg)))
    }
    router.get("/slow.jpg") { _, _ in
        try await Task.sleep(for: slowDelay)
        return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: ByteBuffer(data: jpeg)))
    }
    router.get("/redirect") { request, _ in
        Response(status: .found, headers: [.location: request.uri.queryParameters.get("to") ?? "/"])
    }
    router.get("/big") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: 0xFF, count: 1 << 20))) }
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = Application(router: router, configuration: .init(address: .hostname(host, port: 0)),
                          onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: quietLogger("test-origin"))
    let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger("test-origin")))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        defer { tasks.cancelAll() }
        let result = try await body(port)
        await group.triggerGracefulShutdown()
        return result
    }
}

struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let log: OriginLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        log.received(request.uri.path)
        return try await next(request, context)
    }
}

/// A GET (or another method) through AsyncHTTPClient: status, headers and body.
func get(_ url: String, headers: [(String, String)] = [], method: HTTPMethod = .GET) async throws -> (status: Int, headers: [String: String], body: Data) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 64 << 20)
    var fields: [String: String] = [:]
    for header in response.headers { fields[header.name.lowercased()] = header.value }
    return (Int(response.status.code), fields, Data(buffer: body))
}

/// Base64url of a source URL, as GET URLs carry it.
func encodeSource(_ url: String) -> String { Base64URL.encode(Array(url.utf8)) }

/// The signed path `/{signature}/{processing}/{source}` under `key`.
func signedPath(_ processing: String, _ source: String, key: [UInt8], salt: [UInt8] = []) -> String {
    let rest = "/\(processing)/\(encodeSource(source))"
    return "/" + URLSigner(key: key, salt: salt).signature(for: Substring(rest))! + rest
}

/// Whether a TCP connection to 127.0.0.1:`port` is accepted (one attempt, unlike an HTTP
/// client's pool, which retries until its deadline).
func canConnect(port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Waits until `condition` holds (polling, up to 20 s), or throws.
func eventually(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<4000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
    guard condition() else { throw ConditionNeverMet(what: what) }
}

struct ConditionNeverMet: Error { var what: String }
