import NukeCore
import NukePluginKit

/// BMP is read and written in Swift here (no C library): the codec its errors name.
enum BMPLibrary: CodecLibrary {
    static let name = "NukeBMP"
    static let version = ""
    static let format = ImageType.bmp
}

extension ImageContainer.UserInfoKey {
    /// The size of a BMP's DIB header, which tells its version: 12 (`BITMAPCOREHEADER`), 16–64
    /// (OS/2 2.x), 40 (`BITMAPINFOHEADER`), 52 and 56 (V2, V3), 108 (V4), 124 (V5). An `Int`.
    public static let bmpHeaderSizeKey: ImageContainer.UserInfoKey = "nukecodecs/bmp-header-size"
    /// A BMP's bits per pixel: 1, 2, 4, 8, 16, 24 or 32. An `Int`.
    public static let bmpBitCountKey: ImageContainer.UserInfoKey = "nukecodecs/bmp-bit-count"
    /// A BMP's compression as a name: `"none"`, `"rle8"`, `"rle4"`, `"rle24"`, `"bitfields"`,
    /// `"alphabitfields"`. A `String`.
    public static let bmpCompressionKey: ImageContainer.UserInfoKey = "nukecodecs/bmp-compression"
}
