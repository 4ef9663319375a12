#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore

/// Reads and writes Netpbm files: PAM (`P7`), PPM (`P6`) and PGM (`P5`) — the format of the
/// reference decodes fixtures are compared with.
///
/// PAM holds decoded pixels exactly as they are (gray, gray+alpha, RGB or RGBA; 8 or 16
/// bits), which makes it the format for comparing decoders with other tools. 16-bit samples
/// are big-endian in the file, as Netpbm specifies.
public enum Netpbm {
    /// Writes a bitmap as PAM, with straight alpha.
    public static func pam(_ bitmap: Bitmap) -> Data {
        inMemory { try writePAM(bitmap, to: &$0) }
    }

    /// Writes a bitmap as PPM (colour) or PGM (gray), dropping alpha.
    public static func pnm(_ bitmap: Bitmap) -> Data {
        inMemory { try writePNM(bitmap, to: &$0) }
    }

    /// The bytes a writer puts into a `DataOutputStream`, which never throws.
    private static func inMemory(_ write: (inout DataOutputStream) throws -> Void) -> Data {
        do {
            return try DataOutputStream.collecting(write)
        } catch {
            preconditionFailure("writing into memory cannot fail: \(error)")
        }
    }

    /// Reads a PAM, PPM or PGM file (binary forms only) within the default limits.
    ///
    /// - Throws: `ImageCodecError` with code `.corrupt`, `.incomplete` or `.limitExceeded`.
    public static func decode(_ data: Data) throws -> Bitmap {
        try NetpbmDecoding(context: ImageDecodingContext(data: data)).bitmap(data)
    }
}
