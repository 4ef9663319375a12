import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NukeCore

/// `GET /{signature}/{processing}/{source}`: a thumbnail a CDN can cache. The signature covers
/// the rest of the path (``URLSigner``); the processing segment is a ``ThumbnailRequest``; the
/// source an ``ImageSource``. The answer varies with `Accept` when the URL names no format, and
/// carries a strong `ETag` known before the source is read, so that revalidation (`304`) costs
/// neither a fetch nor a decode.
struct SignedThumbnails: Sendable {
    let signer: URLSigner
    let fetcher: SourceFetcher
    let thumbnailer: Thumbnailer
    let cacheMaxAge: Int

    struct Failure: Error {
        var status: HTTPResponse.Status
        var reason: String
    }

    func respond(to request: Request, context: ThumbnailContext) async throws -> Response {
        let started = ContinuousClock.now
        var log: Logger.Metadata = ["client": .string(context.clientAddress)]
        var headers = HTTPFields()
        func finish(_ status: HTTPResponse.Status, _ body: ByteBuffer, _ outcome: String) -> Response {
            log["status"] = "\(status.code)"
            log["outcome"] = .string(LogEscaping.escaped(outcome))
            let elapsed = ContinuousClock.now - started
            log["ms"] = "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)"
            context.logger.info("thumbnail", metadata: log)
            return Response(status: status, headers: headers, body: .init(byteBuffer: body))
        }
        do {
            let target = request.head.path ?? "/"
            let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let (thumbnail, source, format, quality, signedPath) = try parse(path: path, accept: request.headers[.accept], headers: &headers)
            log["size"] = "\(thumbnail.mode.rawValue):\(thumbnail.width)x\(thumbnail.height)"
            log["format"] = .string(format.name)
            let etag = CacheValidation.etag(path: signedPath, format: format, quality: quality)
            headers[.eTag] = etag
            headers[.cacheControl] = "public, max-age=\(cacheMaxAge), immutable"
            if CacheValidation.matches(ifNoneMatch: request.headers[.ifNoneMatch], etag: etag) {
                return finish(.notModified, ByteBuffer(), "not modified")
            }
            let data: Data
            let share = ByteBudget.Share(thumbnailer.budget)
            defer { share.release() }
            do {
                data = try await fetcher.fetch(source, share: share, logger: context.logger)
            } catch {
                if error.status == .serviceUnavailable { headers[.retryAfter] = "1" }
                throw Failure(status: error.status, reason: error.reason)
            }
            log["bytes"] = "\(data.count)"
            let output: Data
            do {
                output = try await thumbnailer.render(data, thumbnail, format: format, quality: quality, client: context.clientAddress, log: &log)
            } catch let failure as Thumbnailer.Failure {
                if let seconds = failure.retryAfter { headers[.retryAfter] = "\(seconds)" }
                throw Failure(status: failure.status, reason: failure.reason)
            }
            headers[.contentType] = format.mimeType
            return finish(.ok, ByteBuffer(data: output), "ok")
        } catch let failure as Failure {
            // Errors are not cached as if they were the thumbnail.
            headers[.eTag] = nil
            headers[.cacheControl] = "no-store"
            headers[.contentType] = "text/plain; charset=utf-8"
            return finish(failure.status, ByteBuffer(string: failure.reason + "\n"), failure.reason)
        }
    }

    /// Splits and checks `/{signature}/{processing}/{source}`; the signature first, so that
    /// nothing else of an unsigned URL is looked at.
    func parse(path: Substring, accept: String?, headers: inout HTTPFields)
        throws(Failure) -> (ThumbnailRequest, ImageSource, ImageType, Int, Substring) {
        let parts = path.dropFirst().split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty else {
            throw Failure(status: .notFound, reason: "GET URLs are /{signature}/{processing}/{source}")
        }
        let signedPath = path[parts[0].endIndex...]
        switch signer.verify(signature: parts[0], path: signedPath) {
        case .valid: break
        case .invalid: throw Failure(status: .forbidden, reason: "the signature does not match")
        case .notAccepted(let reason): throw Failure(status: .forbidden, reason: reason)
        }
        let thumbnail: ThumbnailRequest
        let source: ImageSource
        do {
            thumbnail = try ThumbnailRequest(processing: parts[1])
        } catch {
            throw Failure(status: .badRequest, reason: error.reason)
        }
        do {
            source = try ImageSource(encoded: parts[2])
        } catch {
            throw Failure(status: .badRequest, reason: error.reason)
        }
        let format: ImageType
        if let named = thumbnail.format {
            format = named
        } else {
            headers[.vary] = "Accept"
            guard let negotiated = FormatNegotiation.choose(accept: accept, default: thumbnailer.settings.defaultFormat) else {
                throw Failure(status: .notAcceptable, reason: "Accept names none of image/avif, image/webp, image/jpeg")
            }
            format = negotiated
        }
        return (thumbnail, source, format, thumbnail.quality ?? thumbnailer.settings.defaultQuality, signedPath)
    }
}
