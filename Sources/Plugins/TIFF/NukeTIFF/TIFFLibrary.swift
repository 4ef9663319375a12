internal import CTIFFShim
import NukeCore
import NukePluginKit

/// The linked libtiff: its facts and its errors.
enum TIFFLibrary: CodecLibrary {
    static let name = "libtiff"
    /// libtiff's version, such as `"4.5.0"` (from `TIFFGetVersion`'s first line).
    static let version: String = {
        let line = String(cString: nuketiff_version()).split(separator: "\n").first.map(String.init) ?? ""
        return line.components(separatedBy: "Version ").last ?? line
    }()
    static let format = ImageType.tiff
}

extension ImageContainer.UserInfoKey {
    /// TIFF: the number of pages (directories) in the file, as an `Int`.
    public static let tiffPageCountKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-page-count"
    /// TIFF: the page decoded (0-based), as an `Int`.
    public static let tiffPageKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-page"
    /// TIFF: the compression, as libtiff names it (`"LZW"`, `"Deflate"`, `"JPEG"`, `"CCITT G4"`...).
    public static let tiffCompressionKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-compression"
    /// TIFF: bits per sample, as an `Int`.
    public static let tiffBitsPerSampleKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-bits-per-sample"
    /// TIFF: the photometric interpretation (`"RGB"`, `"min-is-black"`, `"palette"`, `"CMYK"`, `"YCbCr"`...).
    public static let tiffPhotometricKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-photometric"
    /// TIFF: what libtiff tolerated while reading the page's directory (unknown private tags such
    /// as GeoTIFF's, unsorted tags, old-style JPEG), as `ImageDecodingWarnings`. Unlike
    /// `ImageContainer.UserInfoKey.warningsKey` (warnings while decoding the pixels), a
    /// strict decode does not refuse them.
    public static let tiffDirectoryWarningsKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-directory-warnings"
    /// TIFF: `true` when the page is stored in tiles, `false` in strips.
    public static let tiffTiledKey: ImageContainer.UserInfoKey = "nukecodecs/tiff-tiled"
}

extension ImageDecodingContext {
    /// The `ImageDecodingContext.userInfo` key of the TIFF page to decode (an `Int`, 0-based;
    /// the first page by default): `context.userInfo[ImageDecodingContext.tiffPageOption] = 2`.
    public static let tiffPageOption = "nukecodecs/tiff-page"
}

/// Names of TIFF's tag values, for `userInfo` and `nuke info`.
enum TIFFNames {
    static func compression(_ value: Int) -> String {
        switch value {
        case 1: "none"
        case 2: "CCITT RLE"
        case 3: "CCITT G3"
        case 4: "CCITT G4"
        case 5: "LZW"
        case 6, 7: "JPEG"
        case 8, 32946: "Deflate"
        case 32773: "PackBits"
        case 34712: "JPEG 2000"
        case 34887: "LERC"
        case 34925: "LZMA"
        case 50000: "Zstandard"
        case 50001: "WebP"
        default: "compression \(value)"
        }
    }

    static func photometric(_ value: Int) -> String {
        switch value {
        case 0: "min-is-white"
        case 1: "min-is-black"
        case 2: "RGB"
        case 3: "palette"
        case 4: "mask"
        case 5: "CMYK"
        case 6: "YCbCr"
        case 8: "CIE L*a*b*"
        case 9: "ICC L*a*b*"
        case 10: "ITU L*a*b*"
        case 32844: "LogL"
        case 32845: "LogLuv"
        default: "photometric \(value)"
        }
    }
}
