import HTTPTypes
import Hummingbird

/// Every answer says whether a cache may keep it: one that did not (the health and readiness
/// checks, `/metrics`, an unknown path's 404, a router's error) gets `Cache-Control: no-store`, so
/// a cache tier in front (Varnish, a CDN) never serves a stale count, a 503 of a busy moment or
/// another path's error. Thumbnails set their own (`public, max-age=…, immutable`), and their
/// errors `no-store`.
struct CacheControlDefault: RouterMiddleware {
    typealias Context = ThumbnailContext

    func handle(_ request: Request, context: ThumbnailContext, next: (Request, ThumbnailContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}
