internal import CPNGShim
import NukeCore
import NukePluginKit

/// The one owner of a `nukepng_encoder`: a libpng writer whose output is taken between calls
/// and written to an ``ImageOutputStream``, so no Swift code runs while libpng's jump buffer
/// is armed.
final class PNGWriter: RowCompressing {
    private let encoder: OpaquePointer
    /// How many times each row is written: 1, or 7 for Adam7. Set by ``start(_:)``.
    private(set) var passes = 0

    /// - Throws: ``ImageCodecError`` `.encodingFailed` when out of memory.
    init() throws(ImageCodecError) {
        guard let encoder = nukepng_encoder_create() else {
            throw Self.failure("out of memory: cannot create the libpng write struct")
        }
        self.encoder = encoder
    }

    deinit {
        nukepng_encoder_destroy(encoder)
    }

    static func failure(_ message: String) -> ImageCodecError {
        PNGLibrary.error(.encodingFailed, .encoding, message)
    }

    /// The signature and the chunks before the image data.
    func start(_ params: inout nukepng_encode_params) throws(ImageCodecError) {
        var passes: Int32 = 0
        try check(nukepng_encoder_start(encoder, &params, &passes))
        self.passes = Int(passes)
    }

    /// `png_write_row` for `count` rows `stride` bytes apart from `rows`.
    func writeRows(_ rows: UnsafeRawPointer, stride: Int, count: Int) throws(ImageCodecError) {
        try check(nukepng_encoder_write_rows(encoder, rows.assumingMemoryBound(to: UInt8.self), stride, UInt32(count)))
    }

    /// `png_write_end`.
    func finish() throws(ImageCodecError) {
        try check(nukepng_encoder_finish(encoder))
    }

    /// The bytes produced since the last call.
    func takeOutput() -> UnsafeRawBufferPointer {
        var bytes: UnsafePointer<UInt8>?
        var count = 0
        nukepng_encoder_take_output(encoder, &bytes, &count)
        return UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count)
    }

    private func check(_ status: nuke_status) throws(ImageCodecError) {
        guard status != NUKE_STATUS_OK else { return }
        throw PNGLibrary.encodingError(status: status, diagnostics: nukepng_encoder_diagnostics(encoder).pointee)
    }
}
