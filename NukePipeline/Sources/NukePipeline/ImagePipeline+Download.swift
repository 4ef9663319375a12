import Foundation
import NukeCore
import Synchronization

extension ImagePipeline {
    /// Loads the request's data: from its provider, or over HTTP through the loader, resuming a
    /// partial download it kept or revalidating a stale response the HTTP cache kept, checking the
    /// status, the size and the bytes themselves.
    ///
    /// - Returns: the data, and whether it is `stale`'s, confirmed by a `304`.
    func download(_ request: ImageRequest, revalidating stale: HTTPCache.Entry? = nil, handle: JobHandle,
                  metrics: inout ImageTask.Metrics) async throws -> (Data, revalidated: Bool) {
        var http: HTTPRequestDescription
        switch request.resource {
        case .provider(_, let load):
            let data = try await load()
            try validate(data, contentType: nil)
            return (data, false)
        case .http(let description):
            http = description
        }
        let requestHeaders = http.headers
        let resumeKey = request.dataKey
        let httpCache = request.options.contains(.disableDiskCacheWrites) ? nil : configuration.httpCacheInUse
        if let stale { http.headers += stale.conditionalHeaders }
        let partial = configuration.isResumableDataEnabled && stale == nil ? resumableData.take(resumeKey) : nil
        let limit = configuration.maximumResponseSize
        var buffer = Data()
        var expected: Int64?
        var validator: String?
        var contentType: String?
        var resumed = 0
        var checked = !configuration.validatesContent
        var head: DataLoadResponse?
        do {
            let loadRequest = DataLoadRequest(http: http, resume: partial.map { (Int64($0.data.count), $0.validator) })
            try await configuration.dataLoader.loadData(for: loadRequest, onResponse: { response in
                head = response
                if response.statusCode == 304, stale != nil { return }
                guard response.statusCode == 200 || response.statusCode == 206 else {
                    throw Error.statusCode(response.statusCode, url: response.url ?? http.url)
                }
                var remaining = response.contentLength
                if response.statusCode == 206 {
                    // Only the range asked for is a continuation; anything else is refused.
                    guard let partial, let range = response.contentRange, range.first == Int64(partial.data.count) else {
                        throw Error.statusCode(206, url: response.url ?? http.url)
                    }
                    buffer = partial.data
                    resumed = partial.data.count
                    if remaining == nil, let total = range.total { remaining = total - range.first }
                    handle.send(.chunk(partial.data, offset: 0))
                }
                expected = remaining.map { $0 + Int64(resumed) }
                if let expected, expected > limit { throw Error.responseTooLarge(limit: limit) }
                validator = response.resumeValidator
                contentType = response.header("Content-Type")
            }, onData: { chunk in
                if head?.statusCode == 304 { return }
                guard Int64(buffer.count + chunk.count) <= limit else { throw Error.responseTooLarge(limit: limit) }
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
        } catch {
            // Cut off or cancelled: keep what came, for the next equivalent request.
            if configuration.isResumableDataEnabled, let validator, buffer.count > resumed || partial != nil, !buffer.isEmpty {
                resumableData.store(ResumableData(data: buffer, validator: validator), forKey: resumeKey)
            }
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw Error.dataLoadingFailed(error)
        }
        if let head, head.statusCode == 304, let stale {
            httpCache?.refresh(stale, response: head, forKey: resumeKey, requestHeaders: requestHeaders)
            return (stale.data, true)
        }
        guard !buffer.isEmpty else { throw Error.emptyResponse }
        if !checked { try validate(buffer, contentType: contentType) }
        metrics.bytesDownloaded = Int64(buffer.count - resumed)
        metrics.bytesResumed = Int64(resumed)
        if let head, head.statusCode == 200 {
            httpCache?.store(buffer, response: head, forKey: resumeKey, requestHeaders: requestHeaders)
        }
        return (buffer, false)
    }

    /// The bytes decide, not the `Content-Type`: a response no format the program links recognises
    /// is refused before it is decoded or cached.
    private func validate(_ data: Data, contentType: String?) throws {
        guard configuration.validatesContent else { return }
        guard ImageType(data) != nil else { throw Error.notAnImage(contentType: contentType) }
    }
}

/// The bytes of a download that stopped, and the validator they belong to.
struct ResumableData: Sendable {
    var data: Data
    var validator: String
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
