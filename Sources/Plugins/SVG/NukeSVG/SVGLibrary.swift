// Imported for its module map's `link "z"` (SVGZ sniffing); librsvg itself is loaded on first use.
internal import CLibSVG
internal import CSVGShim
import NukeCore

/// Facts about the librsvg this module loads on first use, and its errors.
enum SVGLibrary {
    /// librsvg's version, such as `"2.54.7"`; empty when librsvg cannot be loaded. Reading it
    /// loads librsvg (the shim opens it on first use rather than linking it: with cairo and glib
    /// it brings 42 shared libraries to every process that links it).
    static let version: String = String(cString: nukesvg_version())

    /// The codec name errors carry, such as `"librsvg 2.54.7"`.
    static var codecName: String { version.isEmpty ? "librsvg" : "librsvg \(version)" }

    static func error(_ code: ImageCodecError.Code, _ stage: ImageCodecError.Stage, _ message: String) -> ImageCodecError {
        ImageCodecError(code, stage: stage, format: .svg, codec: codecName, message: message)
    }

    static func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        error(code, .decoding, message)
    }

    static func error(status: nuke_status, diagnostics: nuke_diagnostics, context: String) -> ImageCodecError {
        let code = ImageCodecError.Code(shimStatus: Int32(status.rawValue)) ?? .internalFailure
        var message = withUnsafeBytes(of: diagnostics.message) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        if message.isEmpty { message = "librsvg failed" }
        return error(code, .decoding, "\(context): \(message)")
    }
}

extension ImageContainer.UserInfoKey {
    /// SVG: the document's intrinsic size in pixels (`ImageSize`, rounded up), before fitting to a
    /// target size.
    public static let svgIntrinsicSizeKey: ImageContainer.UserInfoKey = "nukecodecs/svg-intrinsic-size"
    /// SVG: the root element's viewBox, `[x, y, width, height]` (`[Double]`), when it has one.
    public static let svgViewBoxKey: ImageContainer.UserInfoKey = "nukecodecs/svg-viewbox"
}
