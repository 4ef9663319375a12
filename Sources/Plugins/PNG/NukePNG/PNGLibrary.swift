internal import CPNGShim
import NukeCore
import NukePluginKit

/// The linked libpng: its facts and its errors.
enum PNGLibrary: CodecLibrary {
    static let name = "libpng"
    /// libpng's version as it reports it at run time, such as `"1.6.39"`
    /// (`png_get_libpng_ver`).
    static let version: String = String(cString: nukepng_version())
    static let format = ImageType.png
}
