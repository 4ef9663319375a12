internal import CJXLShim
import NukeCore
import NukePluginKit

/// The libjxl this module opens on first use: its facts and its errors.
enum JXLLibrary: CodecLibrary {
    static let name = "libjxl"
    /// libjxl's decoder version, such as `"0.7.0"`; empty when libjxl cannot be loaded. Reading it
    /// loads libjxl.
    static let version: String = String(cString: nukejxl_version())
    static let format = ImageType.jxl

    /// Loads libjxl if this process has not yet: the shim opens it on first use rather than
    /// linking it, because loading it costs every process that links it (about 3.6 ms).
    ///
    /// - Throws: ``NukeCore/ImageCodecError/Code/unsupported`` with the dynamic loader's message
    ///   when libjxl is not installed.
    static func load(_ stage: ImageCodecError.Stage = .decoding) throws(ImageCodecError) {
        var diagnostics = nuke_diagnostics()
        let status = nukejxl_load(&diagnostics)
        guard status == NUKE_STATUS_OK else {
            throw error(status: status, diagnostics: diagnostics, stage: stage, context: "loading libjxl")
        }
    }
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
