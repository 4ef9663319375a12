#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded image: one or more frames of pixels plus what the file said about them.
///
/// `Sendable` and copy-on-write throughout. A still image has one frame; an animated one
/// has several, each with its duration, and a ``loopCount``.
public struct Image: Sendable, Equatable {
    /// The frames; never empty.
    public var frames: [ImageFrame] {
        didSet { precondition(!frames.isEmpty, "an image has at least one frame") }
    }
    /// How to rotate or flip the pixels for display (EXIF orientation). Pixels are as stored.
    public var orientation: ImageOrientation
    /// The ICC profile, gamma and rendering intent the file carried.
    public var colorInfo: ColorInfo
    /// How many times an animation plays: 0 means forever.
    public var loopCount: Int
    /// The EXIF block (TIFF header onwards), when the file had one.
    public var exif: Data?
    /// The XMP packet (XML), when the file had one (WebP `XMP `); kept for encoders that write it.
    public var xmp: Data?

    /// Creates a still image.
    public init(bitmap: Bitmap, orientation: ImageOrientation = .up, colorInfo: ColorInfo = ColorInfo(), exif: Data? = nil) {
        self.frames = [ImageFrame(bitmap: bitmap)]
        self.orientation = orientation
        self.colorInfo = colorInfo
        self.loopCount = 0
        self.exif = exif
    }

    /// Creates an animated image.
    public init(frames: [ImageFrame], loopCount: Int = 0, orientation: ImageOrientation = .up, colorInfo: ColorInfo = ColorInfo()) {
        precondition(!frames.isEmpty, "an image has at least one frame")
        self.frames = frames
        self.loopCount = loopCount
        self.orientation = orientation
        self.colorInfo = colorInfo
        self.exif = nil
    }

    /// The first (for a still image, the only) frame's pixels.
    public var bitmap: Bitmap {
        get { frames[0].bitmap }
        set { frames[0].bitmap = newValue }
    }

    /// The width of the first frame's bitmap, in pixels, before orientation is applied.
    public var width: Int { bitmap.width }
    /// The height of the first frame's bitmap, in pixels, before orientation is applied.
    public var height: Int { bitmap.height }
    /// `true` with more than one frame.
    public var isAnimated: Bool { frames.count > 1 }
    /// `true` when the pixel format has an alpha channel.
    public var hasAlpha: Bool { bitmap.pixelFormat.hasAlpha }
    /// The ICC profile's bytes, if any.
    public var iccProfile: Data? {
        get { colorInfo.iccProfile }
        set { colorInfo.iccProfile = newValue }
    }
}

/// One frame of an image.
public struct ImageFrame: Sendable, Equatable {
    /// The frame's pixels.
    public var bitmap: Bitmap
    /// How long the frame shows, in seconds; `nil` for a still image.
    public var duration: Double?

    /// Creates a frame; `duration` in seconds, `nil` for a still image.
    public init(bitmap: Bitmap, duration: Double? = nil) {
        self.bitmap = bitmap
        self.duration = duration
    }
}

/// Nuke's name for the decoded image type.
public typealias PlatformImage = Image
