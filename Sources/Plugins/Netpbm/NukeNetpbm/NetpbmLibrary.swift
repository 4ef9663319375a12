import NukeCore
import NukePluginKit

/// Netpbm is read and written in Swift here (no C library): the codec its errors name.
enum NetpbmLibrary: CodecLibrary {
    static let name = "Netpbm"
    static let version = ""
    static let format = ImageType.netpbm
}
