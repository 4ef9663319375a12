/// The layout of one pixel: which channels, in which order, and how many bits each.
///
/// Channels are interleaved in the order of their name (`rgba` is R, G, B, A). 16-bit
/// samples are stored as `UInt16` in the machine's native byte order.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// The channels of a pixel.
    public enum Channels: Int, Sendable, Hashable {
        /// One grey channel.
        case gray = 1
        /// Grey, then alpha.
        case grayAlpha = 2
        /// Red, green, blue.
        case rgb = 3
        /// Red, green, blue, then alpha.
        case rgba = 4
    }

    /// The channels of a pixel, in memory order.
    public var channels: Channels
    /// 8 or 16.
    public var bitsPerChannel: Int

    /// Creates a format; `bitsPerChannel` is 8 or 16 (16-bit channels are native-endian `UInt16`).
    public init(channels: Channels, bitsPerChannel: Int) {
        precondition(bitsPerChannel == 8 || bitsPerChannel == 16, "bitsPerChannel must be 8 or 16")
        self.channels = channels
        self.bitsPerChannel = bitsPerChannel
    }

    /// 8-bit grey.
    public static let gray8 = PixelFormat(channels: .gray, bitsPerChannel: 8)
    /// 8-bit grey and alpha.
    public static let grayAlpha8 = PixelFormat(channels: .grayAlpha, bitsPerChannel: 8)
    /// 8-bit RGB.
    public static let rgb8 = PixelFormat(channels: .rgb, bitsPerChannel: 8)
    /// 8-bit RGBA.
    public static let rgba8 = PixelFormat(channels: .rgba, bitsPerChannel: 8)
    /// 16-bit grey.
    public static let gray16 = PixelFormat(channels: .gray, bitsPerChannel: 16)
    /// 16-bit grey and alpha.
    public static let grayAlpha16 = PixelFormat(channels: .grayAlpha, bitsPerChannel: 16)
    /// 16-bit RGB.
    public static let rgb16 = PixelFormat(channels: .rgb, bitsPerChannel: 16)
    /// 16-bit RGBA.
    public static let rgba16 = PixelFormat(channels: .rgba, bitsPerChannel: 16)

    /// Number of channels per pixel.
    public var channelCount: Int { channels.rawValue }
    /// Bytes per channel sample: 1 or 2.
    public var bytesPerChannel: Int { bitsPerChannel / 8 }
    /// Bytes per pixel.
    public var bytesPerPixel: Int { channelCount * bytesPerChannel }
    /// `true` when the last channel is alpha.
    public var hasAlpha: Bool { channels == .grayAlpha || channels == .rgba }
    /// `true` for gray and gray+alpha.
    public var isGray: Bool { channels == .gray || channels == .grayAlpha }

    public var description: String {
        let name: String
        switch channels {
        case .gray: name = "gray"
        case .grayAlpha: name = "grayAlpha"
        case .rgb: name = "rgb"
        case .rgba: name = "rgba"
        }
        return "\(name)\(bitsPerChannel)"
    }
}

/// How alpha relates to the colour channels.
public enum AlphaMode: String, Sendable, Hashable {
    /// The format has no alpha channel.
    case none
    /// Colour channels are independent of alpha (PNG, WebP, GIF).
    case straight
    /// Colour channels are already multiplied by alpha.
    case premultiplied
}
