// Imported for its module map's `link "z"` (SVGZ sniffing); librsvg itself is loaded on first use.
internal import CLibSVG
internal import CSVGShim
import NukeCore
import NukePluginKit

/// The librsvg this module loads on first use: its facts and its errors.
enum SVGLibrary: CodecLibrary {
    static let name = "librsvg"
    /// librsvg's version, such as `"2.54.7"`; empty when librsvg cannot be loaded. Reading it
    /// loads librsvg (the shim opens it on first use rather than linking it: with cairo and glib
    /// it brings 42 shared libraries to every process that links it).
    static let version: String = String(cString: nukesvg_version())
    static let format = ImageType.svg
}

extension ImageContainer.UserInfoKey {
    /// SVG: the document's intrinsic size in pixels (`ImageSize`, rounded up), before fitting to a
    /// target size.
    public static let svgIntrinsicSizeKey: ImageContainer.UserInfoKey = "nukecodecs/svg-intrinsic-size"
    /// SVG: the root element's viewBox, `[x, y, width, height]` (`[Double]`), when it has one.
    public static let svgViewBoxKey: ImageContainer.UserInfoKey = "nukecodecs/svg-viewbox"
}
