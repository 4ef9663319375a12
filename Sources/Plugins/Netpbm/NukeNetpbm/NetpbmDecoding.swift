#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels
import NukePluginKit

/// Decodes a complete PAM, PPM or PGM file: the header, the limits, then the samples straight
/// into the request's pixel memory (16-bit samples from big-endian); the core's driver resizes.
struct NetpbmDecoding {
    let context: ImageDecodingContext

    func decode(_ data: Data) throws(ImageCodecError) -> ImageContainer {
        let bitmap = try bitmap(data)
        return ImageContainer(image: Image(bitmap: bitmap), type: .netpbm, isPreview: false, userInfo: [.isProgressiveKey: false])
    }

    func bitmap(_ data: Data) throws(ImageCodecError) -> Bitmap {
        let header = try NetpbmHeaderParser.read(data).get(NetpbmLibrary.self, byteCount: data.count)
        let format = header.pixelFormat
        try context.limits.check(
            width: header.width, height: header.height, bytesPerPixel: format.bytesPerPixel, format: .netpbm,
            codec: NetpbmLibrary.codecName, inputByteCount: data.count
        )
        let count = header.width * header.height * format.bytesPerPixel   // within the limits: no overflow
        guard data.count - header.samplesOffset >= count else {
            throw NetpbmLibrary.error(.incomplete, "expected \(count) bytes of samples, the file has \(max(0, data.count - header.samplesOffset))")
        }
        let start = data.startIndex + header.samplesOffset
        return try context.allocator.makeBitmap(width: header.width, height: header.height, pixelFormat: format) { (raw) throws(ImageCodecError) in
            data[start..<(start + count)].withUnsafeBytes { raw.copyMemory(from: $0) }
            if format.bitsPerChannel == 16 {
                for i in stride(from: 0, to: count - 1, by: 2) {
                    let v = raw.loadUnaligned(fromByteOffset: i, as: UInt16.self)
                    raw.storeBytes(of: UInt16(bigEndian: v), toByteOffset: i, as: UInt16.self)
                }
            }
        }
    }
}
