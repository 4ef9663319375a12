internal import CWebPShim
import NukeCore

/// Facts about the libwebp this module is linked with, and its errors.
enum WebPLibrary {
    /// libwebp's decoder version, such as `"1.2.4"`.
    static let version: String = String(cString: nukewebp_version())

    /// The codec name errors carry, such as `"libwebp 1.2.4"`.
    static let codecName = "libwebp \(version)"

    /// An error about WebP data.
    static func error(_ code: ImageCodecError.Code, _ stage: ImageCodecError.Stage, _ message: String) -> ImageCodecError {
        ImageCodecError(code, stage: stage, format: .webp, codec: codecName, message: message)
    }

    /// An error about WebP data while decoding.
    static func error(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
        error(code, .decoding, message)
    }

    /// The error for a failing shim status, with libwebp's status in the message.
    static func error(status: nuke_status, diagnostics: nuke_diagnostics, stage: ImageCodecError.Stage = .decoding, context: String) -> ImageCodecError {
        let code = ImageCodecError.Code(shimStatus: Int32(status.rawValue)) ?? .internalFailure
        var message = withUnsafeBytes(of: diagnostics.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if message.isEmpty { message = "libwebp failed" }
        return error(code, stage, "\(context): \(message)")
    }
}
