import NukeCore
import NukePluginKit
internal import CJPEGShim

/// The one owner of a `nukejpeg_encoder`: a libjpeg compressor whose output is taken between
/// calls and written to an ``ImageOutputStream``, so no Swift code runs while libjpeg's jump
/// buffer is armed.
final class JPEGCompressor: RowCompressing {
    private let encoder: OpaquePointer

    /// - Throws: ``ImageCodecError`` `.encodingFailed` when out of memory.
    init() throws(ImageCodecError) {
        guard let encoder = nukejpeg_encoder_create() else {
            throw Self.failure("out of memory: cannot create the libjpeg compressor")
        }
        self.encoder = encoder
    }

    deinit {
        nukejpeg_encoder_destroy(encoder)
    }

    static func failure(_ message: String) -> ImageCodecError {
        JPEGLibrary.error(.encodingFailed, .encoding, message)
    }

    /// `jpeg_start_compress` and the markers.
    func start(_ params: inout nukejpeg_encode_params) throws(ImageCodecError) {
        try check(nukejpeg_encoder_start(encoder, &params))
    }

    /// `jpeg_write_scanlines` for `count` rows `stride` bytes apart from `rows`.
    func writeRows(_ rows: UnsafeRawPointer, stride: Int, count: Int) throws(ImageCodecError) {
        try check(nukejpeg_encoder_write_rows(encoder, rows.assumingMemoryBound(to: UInt8.self), stride, UInt32(count)))
    }

    /// `jpeg_finish_compress`.
    func finish() throws(ImageCodecError) {
        try check(nukejpeg_encoder_finish(encoder))
    }

    /// The bytes produced since the last call.
    func takeOutput() -> UnsafeRawBufferPointer {
        var bytes: UnsafePointer<UInt8>?
        var count = 0
        nukejpeg_encoder_take_output(encoder, &bytes, &count)
        return UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count)
    }

    private func check(_ status: nuke_status) throws(ImageCodecError) {
        guard status != NUKE_STATUS_OK else { return }
        throw JPEGLibrary.encodingError(status: status, diagnostics: nukejpeg_encoder_diagnostics(encoder).pointee)
    }
}
