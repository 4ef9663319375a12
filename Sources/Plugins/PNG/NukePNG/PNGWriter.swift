internal import CPNGShim
import NukeCore
import NukePluginKit

/// The one owner of a `nukepng_encoder`: a libpng writer fed and drained by the kit.
typealias PNGWriter = ShimRowEncoder<PNGLibrary>

extension ShimRowEncoder where Library == PNGLibrary {
    /// - Throws: ``ImageCodecError`` `.encodingFailed` when out of memory.
    convenience init() throws(ImageCodecError) {
        try self.init(
            nukepng_encoder_create(), what: "the libpng write struct", destroy: { nukepng_encoder_destroy($0) },
            writeRows: { nukepng_encoder_write_rows($0, $1, $2, $3) }, finish: { nukepng_encoder_finish($0) },
            takeOutput: { nukepng_encoder_take_output($0, $1, $2) }, diagnostics: { nukepng_encoder_diagnostics($0) }
        )
    }

    /// Writes the signature and the chunks before the image data.
    ///
    /// - Returns: How many times each row is written: 1, or 7 for Adam7.
    func start(_ params: inout nukepng_encode_params) throws(ImageCodecError) -> Int {
        var passes: Int32 = 0
        try check(nukepng_encoder_start(pointer, &params, &passes))
        return Int(passes)
    }
}
