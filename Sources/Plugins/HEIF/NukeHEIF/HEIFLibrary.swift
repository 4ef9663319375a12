internal import CHEIFShim
import NukeCore
import NukePluginKit

/// The libheif this module loads on first use: its facts and its errors.
enum HEIFLibrary: CodecLibrary {
    static let name = "libheif"
    /// libheif's version, such as `"1.15.1"`; empty when libheif cannot be loaded. Reading it
    /// loads libheif.
    static let version: String = String(cString: nukeheif_version())
    static let format = ImageType.heif

    /// The HEVC decoder behind libheif for 8-bit images, such as `"FFmpeg libavcodec 59.37.100"`
    /// or `"libde265 HEVC decoder, version 1.0.11"`; empty when libheif cannot be loaded.
    static let hevcDecoder: String = String(cString: nukeheif_hevc_decoder())

    /// Loads libheif if this process has not yet: the shim opens it on first use rather than
    /// linking it, because loading it costs every process that links it (its static
    /// initialisers build libde265's tables).
    ///
    /// - Throws: ``NukeCore/ImageCodecError/Code/unsupported`` with the dynamic loader's message
    ///   when libheif is not installed.
    static func load(format: ImageType) throws(ImageCodecError) {
        var diagnostics = nuke_diagnostics()
        let status = nukeheif_load(&diagnostics)
        guard status == NUKE_STATUS_OK else {
            throw error(status: status, diagnostics: diagnostics, format: format, context: "loading libheif")
        }
    }
}

extension ImageContainer.UserInfoKey {
    /// HEIF: the primary image's bits per luma sample (8, 10, 12).
    public static let heifBitDepthKey: ImageContainer.UserInfoKey = "nukecodecs/heif-bit-depth"
    /// HEIF: the number of top-level images in the file (the primary one included).
    public static let heifImageCountKey: ImageContainer.UserInfoKey = "nukecodecs/heif-image-count"
    /// HEIF: the number of thumbnails of the primary image.
    public static let heifThumbnailCountKey: ImageContainer.UserInfoKey = "nukecodecs/heif-thumbnail-count"
    /// HEIF: the major brand of the `ftyp` box, such as `"heic"` or `"avif"`.
    public static let heifBrandKey: ImageContainer.UserInfoKey = "nukecodecs/heif-brand"
    /// HEIF: the `nclx` colour description, `[primaries, transfer, matrix, fullRange]` as
    /// ISO/IEC 23091-2 numbers, when the file has one instead of an ICC profile.
    public static let heifNCLXKey: ImageContainer.UserInfoKey = .nclxKey
    /// HEIF: `true` when decode to size used an embedded thumbnail.
    public static let heifUsedThumbnailKey: ImageContainer.UserInfoKey = "nukecodecs/heif-used-thumbnail"
}
