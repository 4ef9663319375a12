internal import CJPEGShim
import NukeCore
import NukePluginKit

/// The linked libjpeg-turbo: its facts and its errors.
enum JPEGLibrary: CodecLibrary {
    static let name = "libjpeg-turbo"
    /// The version from `LIBJPEG_TURBO_VERSION` in jconfig.h, such as `"2.1.5"`.
    static let version = String(cString: nukejpeg_library_version())
    static let format = ImageType.jpeg
}
