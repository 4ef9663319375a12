// Imported for its module map's `link "gif"`: giflib has no pkg-config file to supply -lgif.
internal import CLibGIF
internal import CGIFShim
import NukeCore

/// Facts about the giflib this module is linked with.
enum GIFLibrary {
    /// giflib's version, such as `"5.2.1"` (giflib has no run-time version call; this is the
    /// header's `GIFLIB_MAJOR.MINOR.RELEASE`).
    static let version: String = String(cString: nukegif_version())

    /// The codec name errors carry, such as `"giflib 5.2.1"`.
    static let codecName = "giflib \(version)"

    /// An error about GIF data.
    static func error(_ code: ImageCodecError.Code, _ stage: ImageCodecError.Stage, _ message: String) -> ImageCodecError {
        ImageCodecError(code, stage: stage, format: .gif, codec: codecName, message: message)
    }

    /// An error about GIF data while decoding.
    static func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        error(code, .decoding, message)
    }
}
