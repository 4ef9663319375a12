#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CJXLShim
import NukeCore
import NukePluginKit

/// Owns one libjxl decoder (`JxlDecoder`) and the bytes it has not consumed.
///
/// The shim copies each ``append(_:)``'s bytes after the rest libjxl left unconsumed, so a
/// download gives every byte once. Pixels go into the output passed to each ``process(into:stride:cancellation:)``,
/// used only during that call.
final class JXLDecoderHandle {
    private let decoder: OpaquePointer

    /// Creates a decoder that refuses images of more than `maxPixels`.
    ///
    /// The corresponding libjxl functions are `JxlDecoderCreate`, `JxlDecoderSubscribeEvents`
    /// and `JxlDecoderSetKeepOrientation`.
    init(maxPixels: Int, pixels: Bool, progressive: Bool, keepsPremultiplied: Bool) throws(ImageCodecError) {
        try JXLLibrary.load()
        var flags: UInt32 = 0
        if pixels { flags |= NUKEJXL_DECODE_PIXELS.rawValue }
        if progressive { flags |= NUKEJXL_DECODE_PROGRESSIVE.rawValue }
        if keepsPremultiplied { flags |= NUKEJXL_DECODE_KEEP_PREMULTIPLIED.rawValue }
        guard let decoder = nukejxl_decoder_create(UInt64(max(0, maxPixels)), flags) else {
            throw JXLLibrary.error(.internalFailure, "libjxl could not create a decoder (out of memory)")
        }
        self.decoder = decoder
    }

    deinit { nukejxl_decoder_destroy(decoder) }

    /// Gives libjxl bytes that follow the ones given before.
    func append(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let status = nukejxl_decoder_append(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard status == NUKE_STATUS_OK else { throw failure(status, "reading the JPEG XL data") }
    }

    /// Says no more bytes come.
    func closeInput() { nukejxl_decoder_close_input(decoder) }

    /// Chooses the pixel layout of the frames to come.
    func setOutput(_ format: PixelFormat) {
        nukejxl_decoder_set_output_format(decoder, UInt32(format.channelCount), UInt32(format.bitsPerChannel))
    }

    /// What one ``process(into:stride:cancellation:)`` call reached.
    enum Event: Equatable {
        case needsMoreData, basicInfo, color, frame, pass, frameComplete, done
    }

    /// Decodes as far as the bytes go, up to the next event.
    ///
    /// - Throws: ``NukeCore/ImageCodecError``: `.incomplete` (after ``closeInput()``), `.corrupt`,
    ///   `.limitExceeded`, `.cancelled`.
    ///
    /// The corresponding libjxl function is `JxlDecoderProcessInput`.
    func process(into output: UnsafeMutableRawBufferPointer?, stride: Int, cancellation: UnsafePointer<nuke_cancellation>?) throws(ImageCodecError) -> Event {
        var event = NUKEJXL_EVENT_NONE
        let status = nukejxl_decoder_process(decoder, output?.baseAddress?.assumingMemoryBound(to: UInt8.self), stride, output?.count ?? 0,
                                             cancellation, &event)
        switch status {
        case NUKE_STATUS_NEED_MORE: return .needsMoreData
        case NUKE_STATUS_OK, NUKE_STATUS_PAUSED:
            switch event {
            case NUKEJXL_EVENT_BASIC_INFO:
                hasInfo = true
                return .basicInfo
            case NUKEJXL_EVENT_COLOR: return .color
            case NUKEJXL_EVENT_FRAME: return .frame
            case NUKEJXL_EVENT_PASS: return .pass
            case NUKEJXL_EVENT_FRAME_COMPLETE: return .frameComplete
            default: return .done
            }
        default:
            throw failure(status, "decoding the JPEG XL image")
        }
    }

    private func failure(_ status: nuke_status, _ context: String) -> ImageCodecError {
        let stage: ImageCodecError.Stage = hasInfo ? .decoding : .header
        return JXLLibrary.error(status: status, diagnostics: nukejxl_decoder_diagnostics(decoder).pointee, stage: stage, context: context)
    }

    /// Whether the basic info was read: errors before it are the header's.
    private var hasInfo = false

    /// The basic info; valid after `.basicInfo`.
    var info: nukejxl_basic_info { nukejxl_decoder_info(decoder).pointee }

    /// The colour description; valid after `.color`.
    var color: nukejxl_color { nukejxl_decoder_color(decoder).pointee }

    /// The ICC profile of the decoded pixels; valid after `.color`.
    var iccProfile: Data? {
        var size = 0
        guard let bytes = nukejxl_decoder_icc(decoder, &size), size > 0 else { return nil }
        return Data(bytes: bytes, count: size)
    }

    /// The current frame's duration in ticks; after `.frame`.
    var frameDuration: UInt32 { nukejxl_decoder_frame_duration(decoder) }
}
