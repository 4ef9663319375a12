import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id — the client's `x-request-id` when it is a sane token, otherwise a
/// new UUID — in every log line about it (`request_id`) and in the response's `x-request-id`;
/// and counts every answer in the metrics, by route, status and format, with its latency (from
/// the request's head to its response, before the body is written) by route and status.
struct RequestIdentity<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    static var header: HTTPField.Name { HTTPField.Name("x-request-id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let id = request.headers[Self.header].flatMap(Self.accepted) ?? UUID().uuidString.lowercased()
        var context = context
        context.logger[metadataKey: "request_id"] = .string(id)
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.header] = id
        let format = response.status == .ok ? response.headers[.contentType].flatMap(Self.formatName) : nil
        metrics.countRequest(route: Self.route(request), status: response.status.code, format: format)
        metrics.recordLatency(route: Self.route(request), status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }

    /// Up to 128 letters, digits, `-`, `_`, `.`; anything else is replaced, not logged.
    static func accepted(_ id: String) -> String? {
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy({ byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }) else { return nil }
        return id
    }

    /// A few fixed labels, never the path itself (which would make a series per URL).
    static func route(_ request: Request) -> String {
        switch (request.method, request.uri.path) {
        case (.post, _): "upload"
        case (_, "/health"): "health"
        case (_, "/ready"): "ready"
        case (_, "/metrics"): "metrics"
        default: "get"
        }
    }

    static func formatName(_ contentType: String) -> String? {
        contentType.hasPrefix("image/") ? String(contentType.dropFirst(6)) : nil
    }
}
