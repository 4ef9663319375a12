internal import CWebPShim
import NukeCore
import NukePluginKit

/// The linked libwebp: its facts and its errors.
enum WebPLibrary: CodecLibrary {
    static let name = "libwebp"
    /// libwebp's decoder version, such as `"1.2.4"`.
    static let version: String = String(cString: nukewebp_version())
    static let format = ImageType.webp
}
