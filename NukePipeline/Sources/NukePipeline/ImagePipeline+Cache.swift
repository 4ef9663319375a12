import Foundation
import NukeCore

extension ImagePipeline {
    /// The pipeline's caches as one facade, keyed as the pipeline keys them (Nuke's
    /// `ImagePipeline.Cache`): read, store and remove a request's processed image in memory and on
    /// disk, and its original data on disk, with the keys the pipeline itself uses — the
    /// response's identity (normalised URL, credentials, the headers it varies on), the decode
    /// options and the processors.
    ///
    /// ```swift
    /// pipeline.cache.removeCachedImage(for: request)     // a processed thumbnail, in memory and on disk
    /// pipeline.cache.removeCachedData(for: request)      // the original bytes
    /// ```
    public var cache: Cache { Cache(pipeline: self) }

    /// The facade over a pipeline's caches.
    public struct Cache: Sendable {
        /// Which caches an operation reaches.
        public struct Caches: OptionSet, Sendable, Hashable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }

            /// The ``ImageCache``.
            public static let memory = Caches(rawValue: 1 << 0)
            /// The ``DataCache`` (encoded processed images).
            public static let disk = Caches(rawValue: 1 << 1)
            /// Both.
            public static let all: Caches = [.memory, .disk]
        }

        let pipeline: ImagePipeline

        /// The processed image the memory cache holds for `request`; setting stores or (`nil`)
        /// removes it there.
        public subscript(request: ImageRequest) -> ImageContainer? {
            get { pipeline.configuration.imageCache?[pipeline.imageKey(for: request)] }
            nonmutating set {
                let key = pipeline.imageKey(for: request)
                if let newValue { pipeline.configuration.imageCache?[key] = newValue } else {
                    pipeline.configuration.imageCache?.removeValue(forKey: key)
                }
            }
        }

        /// The image the memory cache holds for `url` (no processors).
        public subscript(url: URL) -> ImageContainer? {
            get { self[ImageRequest(url: url)] }
            nonmutating set { self[ImageRequest(url: url)] = newValue }
        }

        /// The processed image for `request`, from memory, else decoded from the disk cache's
        /// encoded copy (on the calling thread, as Nuke does).
        public func cachedImage(for request: ImageRequest, caches: Caches = .all) -> ImageContainer? {
            let key = pipeline.imageKey(for: request)
            if caches.contains(.memory), let image = pipeline.configuration.imageCache?[key] { return image }
            guard caches.contains(.disk), let dataCache = pipeline.configuration.dataCache,
                  pipeline.configuration.dataCachePolicy.storesEncodedImages(processors: request.processors),
                  let data = dataCache.data(forKey: key) else { return nil }
            var context = pipeline.configuration.registry.makeContext(for: data, isCompleted: true)
            context.limits = request.limits ?? pipeline.configuration.limits
            return try? pipeline.configuration.registry.decode(context)
        }

        /// Stores `image` as `request`'s processed image (on disk encoded, as the policy says).
        public func storeCachedImage(_ image: ImageContainer, for request: ImageRequest, caches: Caches = .all) {
            let key = pipeline.imageKey(for: request)
            if caches.contains(.memory) { pipeline.configuration.imageCache?[key] = image }
            if caches.contains(.disk), let dataCache = pipeline.configuration.dataCache,
               pipeline.configuration.dataCachePolicy.storesEncodedImages(processors: request.processors),
               let data = try? pipeline.configuration.encoderRegistry.encode(image.image, as: pipeline.encodingType(for: image)) {
                dataCache.storeData(data, forKey: key)
            }
        }

        /// Removes `request`'s processed image: the next request makes it again.
        public func removeCachedImage(for request: ImageRequest, caches: Caches = .all) {
            let key = pipeline.imageKey(for: request)
            if caches.contains(.memory) { pipeline.configuration.imageCache?.removeValue(forKey: key) }
            if caches.contains(.disk) { pipeline.configuration.dataCache?.removeData(forKey: key) }
        }

        /// `true` when a cache holds `request`'s processed image.
        public func containsCachedImage(for request: ImageRequest, caches: Caches = .all) -> Bool {
            let key = pipeline.imageKey(for: request)
            if caches.contains(.memory), pipeline.configuration.imageCache?[key] != nil { return true }
            return caches.contains(.disk) && pipeline.configuration.dataCachePolicy.storesEncodedImages(processors: request.processors)
                && pipeline.configuration.dataCache?.containsData(forKey: key) == true
        }

        /// The original data the disk cache holds for `request`.
        public func cachedData(for request: ImageRequest) -> Data? {
            pipeline.configuration.dataCache?.data(forKey: pipeline.originalDataKey(for: request))
        }

        /// Stores `data` as `request`'s original data.
        public func storeCachedData(_ data: Data, for request: ImageRequest) {
            pipeline.configuration.dataCache?.storeData(data, forKey: pipeline.originalDataKey(for: request))
        }

        /// Removes `request`'s original data from the disk cache and the HTTP cache.
        public func removeCachedData(for request: ImageRequest) {
            let key = pipeline.originalDataKey(for: request)
            pipeline.configuration.dataCache?.removeData(forKey: key)
            pipeline.configuration.httpCacheInUse?.removeResponse(forKey: key)
        }

        /// `true` when the disk cache holds `request`'s original data.
        public func containsData(for request: ImageRequest) -> Bool {
            pipeline.configuration.dataCache?.containsData(forKey: pipeline.originalDataKey(for: request)) == true
        }

        /// Empties the caches named.
        public func removeAll(caches: Caches = .all) {
            if caches.contains(.memory) { pipeline.configuration.imageCache?.removeAll() }
            if caches.contains(.disk) {
                pipeline.configuration.dataCache?.removeAll()
                pipeline.configuration.httpCacheInUse?.removeAll()
            }
        }

        /// The memory cache key of `request`'s processed image.
        public func makeImageCacheKey(for request: ImageRequest) -> String { pipeline.imageKey(for: request) }

        /// The disk cache key of `request`'s original data.
        public func makeDataCacheKey(for request: ImageRequest) -> String { pipeline.originalDataKey(for: request) }
    }

    /// The format a processed image is stored in on disk: its own when it can be encoded, else
    /// ``Configuration/processedImageEncoding``.
    func encodingType(for container: ImageContainer) -> ImageType {
        let encoders = configuration.encoderRegistry
        return container.type.flatMap { encoders.encoder(for: $0) != nil ? $0 : nil } ?? configuration.processedImageEncoding
    }
}
