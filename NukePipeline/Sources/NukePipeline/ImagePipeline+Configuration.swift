import Foundation
import NukeCore

extension ImagePipeline {
    /// What the pipeline loads with, where it caches, and how much it does at once.
    public struct Configuration: Sendable {
        /// Loads HTTP resources. Default: an ``HTTPDataLoader`` of its own.
        public var dataLoader: any DataLoading
        /// Decoded images in memory; `nil` for none. Default: an ``ImageCache`` sized by the
        /// process's memory limit.
        public var imageCache: ImageCache?
        /// Data on disk; `nil` (the default) for none. Nuke's aggressive cache: what it keeps is
        /// served without asking the origin, whatever the response's caching headers said.
        public var dataCache: DataCache?
        /// Without a ``dataCache``, responses are kept here as HTTP's caching rules allow
        /// (`Cache-Control`, `Expires`, revalidation with `ETag`/`Last-Modified` and `304`);
        /// `nil` for none. Default: an ``HTTPCache`` of 32 MiB.
        public var httpCache: HTTPCache? = HTTPCache()
        /// The HTTP cache in use: ``httpCache`` when there is no ``dataCache``.
        var httpCacheInUse: HTTPCache? { dataCache == nil ? httpCache : nil }
        /// What goes to ``dataCache``.
        public var dataCachePolicy: DataCachePolicy = .storeOriginalData
        /// The format processed images are stored in when their own cannot be encoded. Default PNG.
        public var processedImageEncoding: ImageType = .png
        /// Decoders. Default: every linked codec.
        public var registry: ImageDecoderRegistry = .shared
        /// Encoders, for ``DataCachePolicy/storeEncodedImages``. Default: every linked codec.
        public var encoderRegistry: ImageEncoderRegistry = .shared
        /// Decode limits, checked after the header and before pixel memory (a request may bring its own).
        public var limits: ImageLimits = .default
        /// Decode progressive previews while the data arrives (``ImageTask/previews``).
        public var isProgressiveDecodingEnabled = false
        /// Let equivalent requests share downloads, decodes and processor runs (Nuke's task
        /// coalescing). Default `true`; `false` gives every request work of its own.
        public var isDeduplicationEnabled = true
        /// Keep the bytes of a download that failed or was cancelled, and resume it with `Range`
        /// and `If-Range` when the resource has a validator.
        public var isResumableDataEnabled = true
        /// Bytes of partial downloads kept for resuming.
        public var resumableDataLimit = 64 * 1024 * 1024
        /// Refuse a response over this many bytes (its `Content-Length`, or the bytes as they come).
        public var maximumResponseSize: Int64 = 64 * 1024 * 1024
        /// Refuse a response whose first bytes are no image format the registry knows, whatever
        /// its `Content-Type` says.
        public var validatesContent = true
        /// Downloads at once.
        public var maximumConcurrentDataLoads = 6
        /// Decodes at once.
        public var maximumConcurrentDecodes = ProcessInfo.processInfo.activeProcessorCount
        /// Processor runs at once.
        public var maximumConcurrentProcessings = ProcessInfo.processInfo.activeProcessorCount
        /// Encodes for the disk cache at once.
        public var maximumConcurrentEncodings = 2
        /// Download starts per second and burst (Nuke's 80 and 25); `nil` for no limit.
        public var rateLimit: RateLimit? = RateLimit(rate: 80, burst: 25)

        /// A configuration; the memory cache is ``ImageCache/shared`` unless given.
        public init(dataLoader: any DataLoading = HTTPDataLoader(), imageCache: ImageCache? = ImageCache.shared, dataCache: DataCache? = nil) {
            self.dataLoader = dataLoader
            self.imageCache = imageCache
            self.dataCache = dataCache
        }

        /// Nuke's `.withDataCache`: the defaults with an aggressive ``DataCache`` in the user's
        /// cache folder (`$XDG_CACHE_HOME/com.github.kean.Nuke.DataCache`, else under `~/.cache`),
        /// sized within the disk's free space, so a restarted server finds what it fetched.
        public static var withDataCache: Configuration { withDataCache() }

        /// The defaults with a ``DataCache`` named `name` in the user's cache folder.
        public static func withDataCache(name: String = "com.github.kean.Nuke.DataCache", sizeLimit: Int? = nil) -> Configuration {
            Configuration(dataCache: try? DataCache(name: name, sizeLimit: sizeLimit))
        }

        /// Nuke's `.withURLCache`: the defaults, responses kept as HTTP's caching rules allow in
        /// an ``HTTPCache`` (there is no `URLCache` here), no ``DataCache``.
        public static var withURLCache: Configuration { Configuration() }
    }

    /// What the disk cache keeps (Nuke's `DataCachePolicy`).
    public enum DataCachePolicy: Sendable, Hashable {
        /// The original data, decoded and processed again on a hit.
        case storeOriginalData
        /// The processed images, encoded; the original only for requests without processors.
        case storeEncodedImages
        /// Both.
        case storeAll
        /// The processed images for requests with processors, the original data otherwise.
        case automatic

        func storesOriginalData(processors: [any Sendable]) -> Bool {
            switch self {
            case .storeOriginalData, .storeAll: true
            case .storeEncodedImages, .automatic: processors.isEmpty
            }
        }

        func storesEncodedImages(processors: [any Sendable]) -> Bool {
            !processors.isEmpty && self != .storeOriginalData
        }
    }

    /// Why a request failed.
    public enum Error: Swift.Error, Sendable, CustomStringConvertible {
        /// The response's status was not 200 or 206.
        case statusCode(Int, url: URL?)
        /// The response is larger than ``Configuration/maximumResponseSize``.
        case responseTooLarge(limit: Int64)
        /// The bytes are no image format the registry knows; the response's `Content-Type`.
        case notAnImage(contentType: String?)
        /// ``ImageRequest/Options/returnCacheDataDontLoad`` and no cache had it.
        case dataMissingInCache
        /// The request has no URL (`ImageRequest(url: nil)`).
        case imageRequestMissing
        /// The loader failed: its error, as it threw it (`HTTPDataLoader.LoadError`, an
        /// `HTTPClientError`, a user loader's own), so that a caller can map it.
        case dataLoadingFailed(any Swift.Error)
        /// The body was empty.
        case emptyResponse
        /// The body was shorter or longer than its framing (`Content-Length`, `Content-Range`)
        /// said: a cut or a lie, never data.
        case responseFraming(expected: Int64, received: Int64)
        /// The decoder's verdict.
        case decodingFailed(ImageCodecError)
        /// A processor failed: its identifier and reason.
        case processingFailed(processor: String, reason: String)

        public var description: String {
            switch self {
            case .statusCode(let code, let url): "the server answered \(code) for \(url?.absoluteString ?? "the request")"
            case .responseTooLarge(let limit): "the response is over the limit of \(limit) bytes"
            case .notAnImage(let type): "the response is not an image the pipeline can decode (Content-Type \(type ?? "none"))"
            case .dataMissingInCache: "the data is in no cache, and the request allows no loading"
            case .imageRequestMissing: "the request has no URL"
            case .dataLoadingFailed(let error): "loading failed: \(error)"
            case .emptyResponse: "the response was empty"
            case .responseFraming(let expected, let received):
                received < expected ? "the response ended after \(received) of the \(expected) bytes its headers announced"
                    : "the response sent more than the \(expected) bytes its headers announced"
            case .decodingFailed(let error): "decoding failed: \(error)"
            case .processingFailed(let processor, let reason): "processor \(processor) failed: \(reason)"
            }
        }
    }
}
