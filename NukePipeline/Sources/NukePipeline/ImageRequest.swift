import Foundation
import NukeCore
import NukeProcessing

/// What to load and how: Nuke's `ImageRequest`. A URL, an HTTP request description with headers,
/// or a data provider of the caller's; the processors to run on the decoded image; a priority
/// that can change while the task runs; and options about the caches.
///
/// ```swift
/// let request = ImageRequest(url: url, processors: [ImageProcessors.Resize(width: 256)])
/// let response = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable {
    /// Where the data comes from.
    public enum Resource: Sendable {
        /// An HTTP(S) request (a plain URL is a GET without extra headers).
        case http(HTTPRequestDescription)
        /// The caller's own bytes: `id` names them for the caches and deduplication, and
        /// `load` produces them when no cache has them.
        case provider(id: String, load: @Sendable () async throws -> Data)
    }

    /// The resource.
    public var resource: Resource
    /// Run on the decoded image, in order.
    public var processors: [any ImageProcessing]
    /// How soon the request is served among those waiting for the same stage.
    public var priority: Priority
    /// Cache and loading options.
    public var options: Options
    /// Decode straight to this size (the codec's native reduction, then the core's resampler),
    /// as Nuke's thumbnail option: the full image is never decoded. The decoded image is then
    /// the thumbnail, and processors run on it. (`userInfo[.thumbnailKey]`.)
    public var thumbnail: Thumbnail? {
        get { userInfo[.thumbnailKey] as? Thumbnail }
        set { userInfo[.thumbnailKey] = newValue }
    }
    /// Decode under these limits instead of the pipeline's.
    public var limits: ImageLimits?
    /// Set by a pipeline that shares no work: makes this request's jobs its own.
    var jobSalt: String?
    /// A key the caller chooses for the memory and disk caches instead of the one derived from
    /// the resource (for example a URL without its expiring signature). (`userInfo[.imageIdKey]`.)
    public var imageID: String? {
        get { userInfo[.imageIdKey] as? String }
        set { userInfo[.imageIdKey] = newValue }
    }
    /// Nuke's name: the key the caches use for the resource, ``imageID`` when set, else the URL.
    public var imageId: String? { imageID ?? url?.absoluteString }
    /// Options by key, as Nuke's `userInfo`: ``UserInfoKey/imageIdKey`` (a `String`),
    /// ``UserInfoKey/thumbnailKey`` (a ``Thumbnail``), and the app's own.
    /// ``UserInfoKey/scaleKey`` is kept and not read: a server has no screen scale.
    public var userInfo: [UserInfoKey: any Sendable] = [:]

    /// A key of ``userInfo``.
    public struct UserInfoKey: Hashable, Sendable, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }

        /// A `String`: the ``imageID``.
        public static let imageIdKey: UserInfoKey = "github.com/kean/nuke/imageId"
        /// A `Float` in Nuke (the screen scale); kept, not read.
        public static let scaleKey: UserInfoKey = "github.com/kean/nuke/scale"
        /// A ``Thumbnail``: decode to size.
        public static let thumbnailKey: UserInfoKey = "github.com/kean/nuke/thumbnail"
    }

    /// Nuke's name for ``Thumbnail``.
    public typealias ThumbnailOptions = Thumbnail

    /// A request for `url`; `nil` fails with ``ImagePipeline/Error/imageRequestMissing``, as in Nuke.
    public init(url: URL?, processors: [any ImageProcessing] = [], priority: Priority = .normal,
                options: Options = [], thumbnail: Thumbnail? = nil, userInfo: [UserInfoKey: any Sendable]? = nil) {
        let resource: Resource = url.map { .http(HTTPRequestDescription(url: $0)) }
            ?? .provider(id: "nil-url", load: { throw ImagePipeline.Error.imageRequestMissing })
        self.init(resource: resource, processors: processors, priority: priority, options: options, thumbnail: thumbnail)
        for (key, value) in userInfo ?? [:] { self.userInfo[key] = value }
    }

    /// A request for `http`, an HTTP request with its headers.
    public init(http: HTTPRequestDescription, processors: [any ImageProcessing] = [], priority: Priority = .normal,
                options: Options = [], thumbnail: Thumbnail? = nil) {
        self.init(resource: .http(http), processors: processors, priority: priority, options: options, thumbnail: thumbnail)
    }

    /// A request for any resource.
    public init(resource: Resource, processors: [any ImageProcessing] = [], priority: Priority = .normal,
                options: Options = [], thumbnail: Thumbnail? = nil) {
        self.resource = resource
        self.processors = processors
        self.priority = priority
        self.options = options
        if let thumbnail { userInfo[.thumbnailKey] = thumbnail }
    }

    /// Nuke's priorities.
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case veryLow = 0, low, normal, high, veryHigh

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Cache and loading options (Nuke's `ImageRequest.Options`).
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// Skip the memory cache when looking up the image.
        public static let disableMemoryCacheReads = Options(rawValue: 1 << 0)
        /// Don't store the image in the memory cache.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Skip the disk cache when looking up data.
        public static let disableDiskCacheReads = Options(rawValue: 1 << 2)
        /// Don't store data in the disk cache.
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 3)
        /// Load from the origin, ignoring any cached data (the result is still stored).
        public static let reloadIgnoringCachedData: Options = [.disableMemoryCacheReads, .disableDiskCacheReads]
        /// Serve from the caches only: a miss fails with ``ImagePipeline/Error/dataMissingInCache``.
        public static let returnCacheDataDontLoad = Options(rawValue: 1 << 4)
        /// Don't decode progressive previews for this request.
        public static let disableProgressiveDecoding = Options(rawValue: 1 << 5)
    }

    /// Decode-to-size options: fit (or fill) `size`, never enlarging.
    public struct Thumbnail: Sendable, Hashable {
        /// The box, in pixels.
        public var size: ImageSize
        /// Fit inside the box, or cover it.
        public var contentMode: ImageDecodingContext.ContentMode
        /// Turn the pixels upright by their EXIF orientation first (the box is the displayed image's).
        public var appliesOrientation: Bool

        /// Creates thumbnail options.
        public init(size: ImageSize, contentMode: ImageDecodingContext.ContentMode = .aspectFit, appliesOrientation: Bool = true) {
            self.size = size
            self.contentMode = contentMode
            self.appliesOrientation = appliesOrientation
        }

        /// Nuke's `ThumbnailOptions(maxPixelSize:)`: the longer side at most `maxPixelSize` pixels.
        public init(maxPixelSize: Float) {
            let side = max(1, Int(maxPixelSize.rounded()))
            self.init(size: ImageSize(width: side, height: side))
        }

        /// Nuke's `ThumbnailOptions(size:unit:contentMode:)`, in pixels.
        public init(size: CGSize, contentMode: ImageDecodingContext.ContentMode = .aspectFill) {
            self.init(size: ImageSize(width: max(1, Int(size.width.rounded())), height: max(1, Int(size.height.rounded()))),
                      contentMode: contentMode)
        }
    }

    /// The URL, when the resource is HTTP.
    public var url: URL? {
        if case .http(let http) = resource { return http.url }
        return nil
    }
}

/// An HTTP request as the pipeline's loader sends it: Nuke's `URLRequest`, without Apple's
/// Foundation networking.
public struct HTTPRequestDescription: Sendable, Hashable {
    /// `http` or `https`.
    public var url: URL
    /// Extra request headers (`Authorization`, `Accept`...), in order.
    public var headers: [(name: String, value: String)]
    /// Headers that change the response and so belong in the cache key (by default none: the
    /// URL alone names the resource, as in Nuke).
    public var varyingHeaderNames: Set<String>

    /// A GET of `url` with `headers`.
    public init(url: URL, headers: [(name: String, value: String)] = [], varyingHeaderNames: Set<String> = []) {
        self.url = url
        self.headers = headers
        self.varyingHeaderNames = varyingHeaderNames
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.url == rhs.url && lhs.varyingHeaderNames == rhs.varyingHeaderNames
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        for header in headers { hasher.combine(header.name); hasher.combine(header.value) }
    }
}

// MARK: - Keys

extension ImageRequest {
    /// How the image is decoded, as a key's suffix: requests with other thumbnail options share the
    /// data, not the decoded image.
    var decodeSuffix: String {
        guard let thumbnail else { return "" }
        return "\nthumbnail=\(thumbnail.size.width)x\(thumbnail.size.height),\(thumbnail.contentMode),\(thumbnail.appliesOrientation)"
    }

    /// The first `count` processors, as a key's suffix.
    func processorsSuffix(_ count: Int) -> String {
        processors.prefix(count).map { "\n" + $0.identifier }.joined()
    }

    /// The memory and disk cache key of the final image, on the response's cache key.
    func imageKey(_ keys: ResponseKeys) -> String { keys.cache + decodeSuffix + processorsSuffix(processors.count) }
}
