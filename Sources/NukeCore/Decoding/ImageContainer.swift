#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded image with what the decoder knows about it.
public struct ImageContainer: Sendable {
    /// The image.
    public var image: Image
    /// The format it was decoded from.
    public var type: ImageType?
    /// `true` for a progressive preview, `false` for the final image.
    public var isPreview: Bool
    /// The original data, when the decoder chose to attach it.
    public var data: Data?
    /// Extra information, such as ``UserInfoKey/scanNumberKey``.
    public var userInfo: [UserInfoKey: any Sendable]
    /// The animation, decoded on demand, when the image is animated; ``image`` is its first
    /// frame (composited).
    public var animation: ImageAnimation?

    /// Creates a container for a decoded image and what the decoder knows about it.
    public init(
        image: Image, type: ImageType? = nil, isPreview: Bool = false, data: Data? = nil,
        userInfo: [UserInfoKey: any Sendable] = [:], animation: ImageAnimation? = nil
    ) {
        self.image = image
        self.animation = animation
        self.type = type
        self.isPreview = isPreview
        self.data = data
        self.userInfo = userInfo
    }

    /// A key in ``userInfo``.
    public struct UserInfoKey: Hashable, Sendable, ExpressibleByStringLiteral {
        /// The key's name, such as `"nukecodecs/row-count"`; plugins prefix theirs with their own name.
        public let rawValue: String

        /// Creates a key named `rawValue`.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The number of progressive JPEG scans (or PNG passes) a preview shows; on the final
        /// image, how many the decoder read (`Int`).
        public static let scanNumberKey: UserInfoKey = "com.github/kean/nuke/scan-number"
        /// How many complete rows a preview of a non-interlaced image holds (`Int`).
        public static let rowCountKey: UserInfoKey = "nukecodecs/row-count"
        /// How many bytes of input the decoder has consumed (`Int`).
        public static let bytesConsumedKey: UserInfoKey = "nukecodecs/bytes-consumed"
        /// The scale a scaled decode applied, as a `Double` (for JPEG, N/8).
        public static let decodeScaleKey: UserInfoKey = "nukecodecs/decode-scale"
        /// The image's full size before a scaled decode, as an ``ImageSize``.
        public static let originalSizeKey: UserInfoKey = "nukecodecs/original-size"
        /// The scale of a codec's own reduction that rounds sizes up (JPEG's N/8, a `Double`), set
        /// by the codec beside ``originalSizeKey``: the core's finish maps the final size onto the
        /// part of the reduction that covers the image (``ImageScalePlan/finish(_:scale:)``).
        public static let nativeScaleKey: UserInfoKey = "nukecodecs/native-scale"
        /// `true` when the file is progressive (JPEG) or interlaced (PNG), as a `Bool`.
        public static let isProgressiveKey: UserInfoKey = "nukecodecs/is-progressive"
        /// How many frames of an animation a preview has complete (`Int`).
        public static let frameCountKey: UserInfoKey = "nukecodecs/frame-count"
        /// The EXIF orientation the decode applied to the pixels (``ImageOrientation``), when
        /// ``ImageDecodingContext/appliesOrientation`` turned them upright; the image then says
        /// ``ImageOrientation/up``.
        public static let appliedOrientationKey: UserInfoKey = "nukecodecs/applied-orientation"
    }
}
