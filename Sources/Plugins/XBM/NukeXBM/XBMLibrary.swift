import NukeCore
import NukePluginKit

/// XBM is read and written in Swift here (no C library): the codec its errors name.
enum XBMLibrary: CodecLibrary {
    static let name = "NukeXBM"
    static let version = ""
    static let format = ImageType.xbm
}

extension ImageContainer.UserInfoKey {
    /// An X bitmap's hotspot column (`#define name_x_hot`), when it has one. An `Int`.
    public static let xbmHotspotXKey: ImageContainer.UserInfoKey = "nukecodecs/xbm-x-hot"
    /// An X bitmap's hotspot row (`#define name_y_hot`), when it has one. An `Int`.
    public static let xbmHotspotYKey: ImageContainer.UserInfoKey = "nukecodecs/xbm-y-hot"
    /// `true` for an X10 bitmap (`short` values of 16 bits), `false` for X11 (`char`). A `Bool`.
    public static let xbmIsX10Key: ImageContainer.UserInfoKey = "nukecodecs/xbm-x10"
}
