import Foundation
import NukeCore
import Synchronization

extension ImagePipeline {
    /// Loads the request's data: from its provider, or over HTTP through the loader, resuming a
    /// partial download it kept or revalidating a stale response the HTTP cache kept, checking the
    /// status, the framing, the size and the bytes themselves.
    ///
    /// A resume is a bet on a strong validator (RFC 9110 §13.1.5, §14.4): a `206` is taken only
    /// when it carries the validator the partial data was kept with, starts where that data ends,
    /// runs to the end and names the complete length the first response had. Anything else (an
    /// origin or a CDN that ignored `If-Range` for a changed resource, a short or shifted range)
    /// drops the partial data, and the whole resource is loaded once more.
    func download(_ request: ImageRequest, revalidating stale: HTTPCache.Entry? = nil, handle: JobHandle,
                  metrics: inout ImageTask.Metrics) async throws -> Downloaded {
        let http: HTTPRequestDescription
        switch request.resource {
        case .provider(_, let load):
            let data = try await load()
            try validate(data, contentType: nil)
            return Downloaded(data: data, revalidated: false, storeInHTTPCache: nil, response: nil)
        case .http(let description):
            http = description
        }
        let keys = keys(for: request)
        let partial = configuration.isResumableDataEnabled && stale == nil ? resumableData.take(keys.resume) : nil
        do {
            return try await download(request, http: http, keys: keys, stale: stale, partial: partial, handle: handle, metrics: &metrics)
        } catch ResumeRefused.refused {
            // The partial data belongs to another version, or the origin's answer cannot be
            // joined to it: it is dropped, and the whole resource is loaded once.
            return try await download(request, http: http, keys: keys, stale: stale, partial: nil, handle: handle, metrics: &metrics)
        }
    }

    /// One load of `http`, resuming `partial` when given.
    private func download(_ request: ImageRequest, http: HTTPRequestDescription, keys: ResponseKeys, stale: HTTPCache.Entry?,
                          partial: ResumableData?, handle: JobHandle, metrics: inout ImageTask.Metrics) async throws -> Downloaded {
        var http = http
        let requestHeaders = http.headers
        let httpCache = request.options.contains(.disableDiskCacheWrites) ? nil : configuration.httpCacheInUse
        if let stale { http.headers += stale.conditionalHeaders }
        let limit = configuration.maximumResponseSize
        var buffer = Data()
        /// The bytes the response's framing promises, resumed ones included; `nil`: until the connection closes.
        var expected: Int64?
        /// The complete length of the resource, when the response says it.
        var total: Int64?
        var validator: ResumeValidator?
        var contentType: String?
        var resumed = 0
        var checked = !configuration.validatesContent
        var head: DataLoadResponse?
        do {
            let loadRequest = DataLoadRequest(http: http, resume: partial.map { (Int64($0.data.count), $0.validator.ifRange) })
            let loader = delegate?.dataLoader(for: request, pipeline: self) ?? configuration.dataLoader
            try await loader.loadData(for: loadRequest, onResponse: { response in
                head = response
                identities.learn(response, for: request)
                if response.statusCode == 304, stale != nil { return }
                guard response.statusCode == 200 || response.statusCode == 206 else {
                    throw Error.statusCode(response.statusCode, url: response.url ?? http.url)
                }
                validator = ResumeValidator(response)
                var length = response.contentLength
                total = length
                if response.statusCode == 206 {
                    guard let partial, let range = response.contentRange else {
                        // A range nobody asked for.
                        throw Error.statusCode(206, url: response.url ?? http.url)
                    }
                    guard partial.validator.matches(response), range.first == Int64(partial.data.count), range.total == partial.total,
                          range.last + 1 == range.total, length == nil || length == range.last - range.first + 1 else {
                        throw ResumeRefused.refused
                    }
                    length = range.last - range.first + 1
                    total = range.total
                    buffer = partial.data
                    resumed = partial.data.count
                    handle.send(.chunk(partial.data, offset: 0))
                }
                expected = length.map { $0 + Int64(resumed) }
                if let expected, expected > limit { throw Error.responseTooLarge(limit: limit) }
                contentType = response.header("Content-Type")
            }, onData: { chunk in
                if head?.statusCode == 304 { return }
                guard Int64(buffer.count + chunk.count) <= limit else { throw Error.responseTooLarge(limit: limit) }
                if let expected, Int64(buffer.count + chunk.count) > expected {
                    throw Error.responseFraming(expected: expected, received: Int64(buffer.count + chunk.count))
                }
                let offset = buffer.count
                buffer.append(chunk)
                handle.send(.chunk(chunk, offset: offset))
                handle.send(.progress(completed: Int64(buffer.count), total: expected))
                if !checked, buffer.count >= 4096 {
                    try validate(buffer, contentType: contentType)
                    checked = true
                }
            })
        } catch let error as Error {
            throw error
        } catch ResumeRefused.refused {
            throw ResumeRefused.refused
        } catch {
            // Cut off or cancelled: keep what came, for the next request that is the same, when a
            // strong validator and the complete length can tell a later answer's bytes from another version's.
            keepForResume(buffer, resumed: resumed, partial: partial, validator: validator, total: total, key: keys.resume)
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw Error.dataLoadingFailed(error)
        }
        if let head, head.statusCode == 304, let stale {
            httpCache?.refresh(stale, response: head, forKey: keys.cache, requestHeaders: requestHeaders)
            return Downloaded(data: stale.data, revalidated: true, storeInHTTPCache: nil, response: head)
        }
        // A body shorter than its framing said is a cut, however the connection ended.
        if let expected, Int64(buffer.count) != expected {
            keepForResume(buffer, resumed: resumed, partial: partial, validator: validator, total: total, key: keys.resume)
            throw Error.responseFraming(expected: expected, received: Int64(buffer.count))
        }
        guard !buffer.isEmpty else { throw Error.emptyResponse }
        if !checked { try validate(buffer, contentType: contentType) }
        metrics.bytesDownloaded = Int64(buffer.count - resumed)
        metrics.bytesResumed = Int64(resumed)
        var store: (@Sendable (String) -> Void)?
        if let httpCache, let head, head.statusCode == 200 {
            let data = buffer
            store = { key in httpCache.store(data, response: head, forKey: key, requestHeaders: requestHeaders) }
        }
        return Downloaded(data: buffer, revalidated: false, storeInHTTPCache: store, response: head)
    }

    /// Keeps the bytes of a load that stopped for a resume, when they can be told apart from
    /// another version's later: a strong validator and the complete length known.
    private func keepForResume(_ buffer: Data, resumed: Int, partial: ResumableData?, validator: ResumeValidator?, total: Int64?, key: String) {
        guard configuration.isResumableDataEnabled, let validator, let total, buffer.count > resumed || partial != nil,
              !buffer.isEmpty, Int64(buffer.count) < total else { return }
        resumableData.store(ResumableData(data: buffer, validator: validator, total: total), forKey: key)
    }

    /// The bytes decide, not the `Content-Type`: a response in no format the registry's decoders
    /// are registered for is refused before it is decoded or cached. A decoder registered for any
    /// format (an app's closure, with no type) is asked instead, as the registry would ask it.
    private func validate(_ data: Data, contentType: String?) throws {
        guard configuration.validatesContent, ImageType(data) == nil else { return }
        let registry = configuration.registry
        guard registry.decoder(for: registry.makeContext(for: data, isCompleted: false)) != nil else {
            throw Error.notAnImage(contentType: contentType)
        }
    }
}

/// What a download returned.
struct Downloaded: Sendable {
    var data: Data
    /// The bytes are a stale response's, confirmed by a `304`.
    var revalidated: Bool
    /// Stores a `200` in the HTTP cache under a key, when its rules allow; called once the bytes are known good.
    var storeInHTTPCache: (@Sendable (String) -> Void)?
    /// The response head.
    var response: DataLoadResponse?
}

/// A `206` that cannot be joined to the partial data: the load starts again without it.
enum ResumeRefused: Swift.Error {
    case refused
}

/// The bytes of a download that stopped, the validator they belong to and the complete length
/// of the resource they are the start of.
struct ResumableData: Sendable {
    var data: Data
    var validator: ResumeValidator
    var total: Int64
}

/// A strong validator of a response, that `If-Range` may carry and a `206` must repeat
/// (RFC 9110 §8.8.1, §13.1.5): a strong entity tag, else a `Last-Modified` at least a second
/// older than the response's `Date` (a date within the second it was sent may name two versions).
struct ResumeValidator: Sendable, Equatable {
    /// The first response's `ETag`, strong or weak.
    var etag: String?
    /// The first response's `Last-Modified`.
    var lastModified: String?
    /// What `If-Range` sends: the strong entity tag, else the date.
    var ifRange: String

    /// The response's strong validator, or `nil` when it has none.
    init?(_ response: DataLoadResponse) {
        etag = response.header("ETag")
        lastModified = response.header("Last-Modified")
        if let etag, etag.hasPrefix("\""), etag.count >= 2 {
            ifRange = etag
        } else if let text = lastModified, let modified = HTTPDate.parse(text),
                  let date = response.header("Date").flatMap(HTTPDate.parse), date.timeIntervalSince(modified) >= 1 {
            ifRange = text
        } else {
            return nil
        }
    }

    /// `true` when a `206` carries the validator `If-Range` sent, and no other version's: every
    /// validator it repeats is the first response's (RFC 9110 §15.3.7 lets it leave out those
    /// beyond the `ETag`).
    func matches(_ response: DataLoadResponse) -> Bool {
        let theirETag = response.header("ETag"), theirDate = response.header("Last-Modified")
        if ifRange == etag { guard theirETag == etag else { return false } } else { guard theirDate == lastModified else { return false } }
        return (theirETag == nil || theirETag == etag) && (theirDate == nil || theirDate == lastModified)
    }
}
/// Partial downloads kept for resuming, the oldest dropped past a byte limit.
final class ResumableDataStore: Sendable {
    private let byteLimit: Int
    private let entries = Mutex<(items: [String: ResumableData], order: [String], bytes: Int)>(([:], [], 0))

    init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    /// Takes the entry for `key` out of the store (a resumed download that stops again stores anew).
    func take(_ key: String) -> ResumableData? {
        entries.withLock { entries in
            guard let item = entries.items.removeValue(forKey: key) else { return nil }
            entries.order.removeAll { $0 == key }
            entries.bytes -= item.data.count
            return item
        }
    }

    func store(_ item: ResumableData, forKey key: String) {
        guard item.data.count <= byteLimit else { return }
        entries.withLock { entries in
            if let old = entries.items.removeValue(forKey: key) {
                entries.order.removeAll { $0 == key }
                entries.bytes -= old.data.count
            }
            entries.items[key] = item
            entries.order.append(key)
            entries.bytes += item.data.count
            while entries.bytes > byteLimit, !entries.order.isEmpty {
                let oldest = entries.order.removeFirst()
                entries.bytes -= entries.items.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }
}
