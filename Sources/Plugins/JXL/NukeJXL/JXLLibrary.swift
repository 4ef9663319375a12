internal import CJXLShim
import NukeCore
import NukePluginKit

/// The linked libjxl: its facts and its errors.
enum JXLLibrary: CodecLibrary {
    static let name = "libjxl"
    /// libjxl's decoder version, such as `"0.7.0"`.
    static let version: String = String(cString: nukejxl_version())
    static let format = ImageType.jxl
}

extension ImageContainer.UserInfoKey {
    /// JPEG XL: the bits per colour sample the file declares (8, 10, 12, 16; 16 or 32 for float).
    public static let jxlBitDepthKey: ImageContainer.UserInfoKey = "nukecodecs/jxl-bit-depth"
    /// JPEG XL: `true` when the samples are floating point (they are decoded as 16-bit integers).
    public static let jxlIsFloatKey: ImageContainer.UserInfoKey = "nukecodecs/jxl-is-float"
    /// JPEG XL: the colour description as `[primaries, transfer, matrix, fullRange]`, when the
    /// file has an enum colour encoding with an nclx equivalent (the same key as HEIF's).
    public static let jxlNCLXKey: ImageContainer.UserInfoKey = .nclxKey
}
