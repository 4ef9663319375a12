#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CJXLShim
import NukeCore
import NukePluginKit

/// Lossless JPEG recompression: a JPEG file becomes a JPEG XL about a fifth smaller, from which
/// the original JPEG is reconstructed bit for bit.
///
/// libjxl keeps the JPEG's DCT coefficients and what it takes to rebuild the file (the `jbrd`
/// box); the JPEG XL also decodes to pixels with ``NukeCore/ImageDecoders/JXL`` like any other.
///
/// ```swift
/// let jxl = try JXLTranscoder.recompress(jpeg: jpegData)
/// let same = try JXLTranscoder.reconstructJPEG(from: jxl)   // == jpegData
/// ```
public enum JXLTranscoder {
    /// Recompresses a JPEG file losslessly.
    ///
    /// - Parameters:
    ///   - jpeg: A complete JPEG file.
    ///   - effort: libjxl's effort, 1…9 (default 7, as `cjxl`).
    /// - Throws: `ImageCodecError` `.encodingFailed` when libjxl refuses the JPEG
    ///   (progressive JPEGs with unusual scan scripts, arithmetic coding...).
    ///
    /// The corresponding libjxl functions are `JxlEncoderStoreJPEGMetadata` and `JxlEncoderAddJPEGFrame`.
    public static func recompress(jpeg: Data, effort: Int = 7) throws(ImageCodecError) -> Data {
        guard !jpeg.isEmpty else { throw JXLLibrary.encodingError("the JPEG data is empty") }
        var diagnostics = nuke_diagnostics()
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = jpeg.withUnsafeBytes { raw in
            nukejxl_recompress_jpeg(raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, Int32(min(max(effort, 1), 9)), &output, &size, &diagnostics)
        }
        defer { nukejxl_buffer_free(output) }
        guard status == NUKE_STATUS_OK, let output else {
            throw JXLLibrary.encodingError(status: status, diagnostics: diagnostics, context: "recompressing the JPEG")
        }
        return Data(bytes: output, count: size)
    }

    /// Reconstructs the JPEG a JPEG XL was recompressed from.
    ///
    /// - Parameters:
    ///   - jxl: A complete JPEG XL file made by ``recompress(jpeg:effort:)`` or `cjxl` from a JPEG.
    ///   - limits: The JPEG may not exceed `limits.maxDecodedBytes`.
    /// - Throws: `ImageCodecError` `.unsupported` when the file holds no JPEG
    ///   reconstruction data; `.corrupt`, `.incomplete`, `.limitExceeded`.
    ///
    /// The corresponding libjxl functions are `JxlDecoderSetJPEGBuffer` and `JxlDecoderReleaseJPEGBuffer`.
    public static func reconstructJPEG(from jxl: Data, limits: ImageLimits = .default) throws(ImageCodecError) -> Data {
        guard JXLHeaderParser.hasSignature(jxl) else {
            throw JXLLibrary.error(.corrupt, .header, "the data does not start with a JPEG XL signature")
        }
        var diagnostics = nuke_diagnostics()
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = jxl.withUnsafeBytes { raw in
            nukejxl_reconstruct_jpeg(raw.bindMemory(to: UInt8.self).baseAddress!, raw.count, UInt64(max(0, limits.maxDecodedBytes)),
                                     &output, &size, &diagnostics)
        }
        defer { nukejxl_buffer_free(output) }
        guard status == NUKE_STATUS_OK, let output else {
            throw JXLLibrary.error(status: status, diagnostics: diagnostics, context: "reconstructing the JPEG")
        }
        return Data(bytes: output, count: size)
    }}
