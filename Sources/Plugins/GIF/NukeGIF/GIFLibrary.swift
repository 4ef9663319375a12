// Imported for its module map's `link "gif"`: giflib has no pkg-config file to supply -lgif.
internal import CLibGIF
internal import CGIFShim
import NukeCore
import NukePluginKit

/// The linked giflib: its facts and its errors.
enum GIFLibrary: CodecLibrary {
    static let name = "giflib"
    /// giflib's version, such as `"5.2.1"` (giflib has no run-time version call; this is the
    /// header's `GIFLIB_MAJOR.MINOR.RELEASE`).
    static let version: String = String(cString: nukegif_version())
    static let format = ImageType.gif
}
