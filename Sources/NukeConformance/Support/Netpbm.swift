import Foundation
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
        var stream = DataOutputStream()
        do {
            try write(&stream)
        } catch {
            preconditionFailure("writing into memory cannot fail: \(error)")
        }
        return stream.data
    }

    /// Reads a PAM, PPM or PGM file (binary forms only).
    ///
    /// - Throws: ``ImageCodecError`` with code `.corrupt` or `.incomplete`.
    public static func decode(_ data: Data) throws -> Bitmap {
        let bytes = [UInt8](data)
        func fail(_ code: ImageCodecError.Code, _ message: String) -> ImageCodecError {
            ImageCodecError(code, stage: .decoding, format: "public.pbm", codec: "Netpbm", message: message)
        }
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P") else { throw fail(.corrupt, "not a Netpbm file") }
        var index = 2
        func token() -> String? {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                } else if bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
                    index += 1
                } else { break }
            }
            let start = index
            while index < bytes.count, !(bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index])) { index += 1 }
            return start < index ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }
        var width = 0, height = 0, depth = 0, maxval = 0
        var tupleType = ""
        switch bytes[1] {
        case UInt8(ascii: "7"):
            while let key = token(), key != "ENDHDR" {
                switch key {
                case "WIDTH": width = Int(token() ?? "") ?? 0
                case "HEIGHT": height = Int(token() ?? "") ?? 0
                case "DEPTH": depth = Int(token() ?? "") ?? 0
                case "MAXVAL": maxval = Int(token() ?? "") ?? 0
                case "TUPLTYPE": tupleType = token() ?? ""
                default: throw fail(.corrupt, "unknown PAM header field \(key)")
                }
            }
        case UInt8(ascii: "5"), UInt8(ascii: "6"):
            depth = bytes[1] == UInt8(ascii: "5") ? 1 : 3
            width = Int(token() ?? "") ?? 0
            height = Int(token() ?? "") ?? 0
            maxval = Int(token() ?? "") ?? 0
        default:
            throw fail(.corrupt, "unsupported Netpbm type P\(Character(UnicodeScalar(bytes[1])))")
        }
        index += 1  // the single white-space byte before the samples
        guard width > 0, height > 0, (1...4).contains(depth), maxval == 255 || maxval == 65535 else {
            throw fail(.corrupt, "unsupported header: \(width)×\(height) depth \(depth) maxval \(maxval) \(tupleType)")
        }
        let channels: PixelFormat.Channels = [.gray, .grayAlpha, .rgb, .rgba][depth - 1]
        let format = PixelFormat(channels: channels, bitsPerChannel: maxval == 255 ? 8 : 16)
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (count, o2) = pixels.multipliedReportingOverflow(by: format.bytesPerPixel)
        guard !o1, !o2 else { throw fail(.corrupt, "image size \(width)×\(height) is too large") }
        guard bytes.count - index >= count else { throw fail(.incomplete, "expected \(count) bytes of samples") }
        let samples = bytes[index..<(index + count)]
        return Bitmap(width: width, height: height, pixelFormat: format) { raw in
            samples.withUnsafeBytes { raw.copyMemory(from: $0) }
            if format.bitsPerChannel == 16 {
                for i in stride(from: 0, to: raw.count - 1, by: 2) {
                    let v = raw.loadUnaligned(fromByteOffset: i, as: UInt16.self)
                    raw.storeBytes(of: UInt16(bigEndian: v), toByteOffset: i, as: UInt16.self)
                }
            }
        }
    }
}
