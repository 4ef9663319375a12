import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NukeCore
import NukePipeline

/// `GET /{signature}/{processing}/{source}`: a thumbnail a CDN can cache. The signature covers
/// the rest of the path (``URLSigner``); the processing segment is a ``ThumbnailRequest``; the
/// source an ``ImageSource``. The answer varies with `Accept` when the URL names no format, and
/// carries a strong `ETag` known before the source is read, so that revalidation (`304`) costs
/// neither a fetch nor a decode. Identical requests that arrive while one is being answered (one
/// ETag: one signed path, format and quality) share its fetch, decode and encode; different
/// thumbnails of one source share its download (``SourceFetcher``).
struct SignedThumbnails: Sendable {
    let signer: URLSigner
    let fetcher: SourceFetcher
    let thumbnailer: Thumbnailer
    /// Thumbnails being made, by ETag.
    let work: SharedWork<Outcome>
    let cacheMaxAge: Int

    struct Failure: Error, Equatable {
        var status: HTTPResponse.Status
        var reason: String
        var retryAfter: Int?
    }

    /// A thumbnail, and what its making logged (the source's size, its format, the lane).
    struct Rendered: Sendable {
        var output: Data
        var log: Logger.Metadata
    }

    /// What making a thumbnail gave: the thumbnail, or the answer why not.
    typealias Outcome = Result<Rendered, Failure>

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
            // The first request's client is charged the lane's slot; the others wait for its answer.
            let (client, logger) = (context.clientAddress, context.logger)
            let (rendered, joined) = try await Self.shared(work, key: etag) { [self] in
                do {
                    return .success(try await render(source, thumbnail, format: format, quality: quality, client: client, logger: logger))
                } catch let failure as Failure {
                    return .failure(failure)
                }
            }
            log.merge(rendered.log) { old, _ in old }
            if joined { log["shared"] = "true" }
            let output = rendered.output
            headers[.contentType] = format.mimeType
            return finish(.ok, ByteBuffer(data: output), "ok")
        } catch let failure as Failure {
            if let seconds = failure.retryAfter { headers[.retryAfter] = "\(seconds)" }
            // Errors are not cached as if they were the thumbnail.
            headers[.eTag] = nil
            headers[.cacheControl] = "no-store"
            headers[.contentType] = "text/plain; charset=utf-8"
            return finish(failure.status, ByteBuffer(string: failure.reason + "\n"), failure.reason)
        }
    }

    /// The answer `make` gives for `key`, shared with the requests for `key` that arrive while it
    /// is being made, except a refusal meant for the client whose request made it (429: that
    /// client's share of a lane is used up): a request that joined tries once more, as itself.
    static func shared(_ work: SharedWork<Outcome>, key: String,
                       make: @escaping @Sendable () async throws -> Outcome) async throws -> (Rendered, joined: Bool) {
        var (outcome, joined) = try await work.value(for: key, work: make)
        if joined, case .failure(let failure) = outcome, failure.status == .tooManyRequests {
            (outcome, joined) = try await work.value(for: key, work: make)
        }
        return (try outcome.get(), joined)
    }

    /// Fetches the source and makes its thumbnail, the source's bytes reserved in the byte budget
    /// while they are held.
    private func render(_ source: ImageSource, _ thumbnail: ThumbnailRequest, format: ImageType, quality: Int,
                        client: String, logger: Logger) async throws -> Rendered {
        let share = ByteBudget.Share(thumbnailer.budget)
        defer { share.release() }
        let cached = fetcher.isCached(source)
        var data = try await fetch(source, share: share, logger: logger)
        var log: Logger.Metadata = ["bytes": "\(data.count)"]
        do {
            do {
                let output = try await thumbnailer.render(data, thumbnail, format: format, quality: quality, client: client, log: &log)
                return Rendered(output: output, log: log)
            } catch let failure as Thumbnailer.Failure where failure.badBytes && cached {
                // The source cache held bytes that do not decode (torn, or another program's):
                // they go, and the origin is asked once more.
                fetcher.evict(source)
                data = try await fetch(source, share: share, logger: logger, reload: true)
                log["bytes"] = "\(data.count)"
                let output = try await thumbnailer.render(data, thumbnail, format: format, quality: quality, client: client, log: &log)
                return Rendered(output: output, log: log)
            }
        } catch let failure as Thumbnailer.Failure {
            throw Failure(status: failure.status, reason: failure.reason, retryAfter: failure.retryAfter)
        }
    }

    private func fetch(_ source: ImageSource, share: ByteBudget.Share, logger: Logger, reload: Bool = false) async throws(Failure) -> Data {
        do {
            return try await fetcher.fetch(source, share: share, logger: logger, reload: reload)
        } catch {
            throw Failure(status: error.status, reason: error.reason, retryAfter: error.status == .serviceUnavailable ? 1 : nil)
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
