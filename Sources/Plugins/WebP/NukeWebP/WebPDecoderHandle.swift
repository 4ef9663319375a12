internal import CWebPShim
import NukeCore
import NukePluginKit

/// Owns one libwebp incremental decoder (`WebPIDecoder`) for a still image.
///
/// libwebp keeps the bytes it is given (it copies appended data into its own buffer) and
/// writes rows into the output passed to each ``append(_:into:)``, which may be a different
/// buffer each time as long as it holds the rows decoded before (a copy-on-write copy does).
final class WebPDecoderHandle {
    private let decoder: OpaquePointer

    /// Creates a decoder for a `width × height` image written with `stride` bytes per row.
    ///
    /// The corresponding libwebp function is `WebPIDecode`.
    init(layout: nukewebp_layout, width: Int, height: Int, stride: Int) throws(ImageCodecError) {
        guard let decoder = nukewebp_decoder_create(layout, Int32(width), Int32(height), stride) else {
            throw WebPLibrary.error(.internalFailure, "libwebp could not create an incremental decoder (out of memory)")
        }
        self.decoder = decoder
    }

    deinit { nukewebp_decoder_destroy(decoder) }

    /// Appends new bytes and decodes as far as they go.
    ///
    /// - Returns: `true` when the image is complete.
    /// - Throws: ``NukeCore/ImageCodecError`` with libwebp's status: `.corrupt`, `.unsupported`,
    ///   `.internalFailure`.
    ///
    /// The corresponding libwebp function is `WebPIAppend`.
    func append(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ImageCodecError) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0, let out = output.baseAddress else { return false }
        let status = nukewebp_decoder_append(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count,
                                             out.assumingMemoryBound(to: UInt8.self), output.count)
        switch status {
        case NUKE_STATUS_OK: return true
        case NUKE_STATUS_NEED_MORE: return false
        default:
            throw WebPLibrary.error(status: status, diagnostics: nukewebp_decoder_diagnostics(decoder).pointee, context: "decoding the WebP image")
        }
    }

    /// The rows complete from the top.
    ///
    /// The corresponding libwebp function is `WebPIDecGetRGB`.
    var rows: Int { Int(nukewebp_decoder_rows(decoder)) }
}
