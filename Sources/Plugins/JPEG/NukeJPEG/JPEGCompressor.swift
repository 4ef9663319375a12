import NukeCore
import NukePluginKit
internal import CJPEGShim

/// The one owner of a `nukejpeg_encoder`: a libjpeg compressor fed and drained by the kit.
typealias JPEGCompressor = ShimRowEncoder<JPEGLibrary>

extension ShimRowEncoder where Library == JPEGLibrary {
    /// - Throws: ``ImageCodecError`` `.encodingFailed` when out of memory.
    convenience init() throws(ImageCodecError) {
        try self.init(
            nukejpeg_encoder_create(), what: "the libjpeg compressor", destroy: { nukejpeg_encoder_destroy($0) },
            writeRows: { nukejpeg_encoder_write_rows($0, $1, $2, $3) }, finish: { nukejpeg_encoder_finish($0) },
            takeOutput: { nukejpeg_encoder_take_output($0, $1, $2) }, diagnostics: { nukejpeg_encoder_diagnostics($0) }
        )
    }

    /// `jpeg_start_compress` and the markers.
    func start(_ params: inout nukejpeg_encode_params) throws(ImageCodecError) {
        try check(nukejpeg_encoder_start(pointer, &params))
    }
}
