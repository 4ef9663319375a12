import Foundation
import NukeCore

/// Writes PAM and PPM/PGM straight from a bitmap's storage into a stream: the header, then the
/// rows, with no copy of the image. 8-bit rows in the file's layout are written in place; 16-bit
/// samples are byte-swapped to big-endian a row at a time into a small buffer; rows that need
/// converting (premultiplied alpha, alpha dropped for PPM) are converted in batches of
/// ``batchRows`` rows. `nuke convert` streams files with it; ``pam(_:)`` and ``pnm(_:)`` write
/// into a `Data`.
extension Netpbm {
    /// Rows converted at a time when the bitmap's layout is not the file's.
    static let batchRows = 64

    /// Writes `bitmap` as PAM (`P7`), with straight alpha.
    public static func writePAM(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
        let tupleType: String
        switch bitmap.pixelFormat.channels {
        case .gray: tupleType = "GRAYSCALE"
        case .grayAlpha: tupleType = "GRAYSCALE_ALPHA"
        case .rgb: tupleType = "RGB"
        case .rgba: tupleType = "RGB_ALPHA"
        }
        let maxval = bitmap.pixelFormat.bitsPerChannel == 8 ? 255 : 65535
        let header = "P7\nWIDTH \(bitmap.width)\nHEIGHT \(bitmap.height)\nDEPTH \(bitmap.pixelFormat.channelCount)\nMAXVAL \(maxval)\nTUPLTYPE \(tupleType)\nENDHDR\n"
        try writeHeader(header, to: &stream)
        if bitmap.alphaMode == .premultiplied {
            try writeConverted(bitmap, to: &stream) { $0.unpremultiplied() }
        } else {
            try writeSamples(bitmap, to: &stream)
        }
    }

    /// Writes `bitmap` as PPM (colour) or PGM (gray), dropping alpha.
    public static func writePNM(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
        let gray = bitmap.pixelFormat.isGray
        let wide = bitmap.pixelFormat.bitsPerChannel == 16
        let format: PixelFormat = gray ? (wide ? .gray16 : .gray8) : (wide ? .rgb16 : .rgb8)
        try writeHeader("\(gray ? "P5" : "P6")\n\(bitmap.width) \(bitmap.height)\n\(wide ? 65535 : 255)\n", to: &stream)
        if bitmap.pixelFormat == format {
            try writeSamples(bitmap, to: &stream)
        } else {
            try writeConverted(bitmap, to: &stream) { $0.converted(to: format) }
        }
    }

    private static func writeHeader(_ header: String, to stream: inout some ImageOutputStream) throws {
        var header = header
        try header.withUTF8 { try stream.write(UnsafeRawBufferPointer($0)) }
    }

    /// Converts `bitmap` `batchRows` rows at a time and writes each batch's samples.
    private static func writeConverted(_ bitmap: Bitmap, to stream: inout some ImageOutputStream, _ convert: (Bitmap) -> Bitmap) throws {
        var y = 0
        while y < bitmap.height {
            let count = min(batchRows, bitmap.height - y)
            try writeSamples(convert(bitmap.rows(y..<(y + count))), to: &stream)
            y += count
        }
    }

    /// Writes the samples of every row, without padding; 16-bit ones big-endian.
    private static func writeSamples(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
        let rowBytes = bitmap.width * bitmap.pixelFormat.bytesPerPixel
        guard rowBytes > 0, bitmap.height > 0 else { return }
        try bitmap.withUnsafeBytes { raw in
            if bitmap.pixelFormat.bitsPerChannel == 8 {
                if bitmap.bytesPerRow == rowBytes {
                    try stream.write(UnsafeRawBufferPointer(rebasing: raw[..<(rowBytes * bitmap.height)]))
                } else {
                    for y in 0..<bitmap.height {
                        try stream.write(UnsafeRawBufferPointer(rebasing: raw[(y * bitmap.bytesPerRow)..<(y * bitmap.bytesPerRow + rowBytes)]))
                    }
                }
                return
            }
            let swapped = UnsafeMutableRawBufferPointer.allocate(byteCount: rowBytes, alignment: 2)
            defer { swapped.deallocate() }
            for y in 0..<bitmap.height {
                let start = y * bitmap.bytesPerRow
                for i in stride(from: 0, to: rowBytes, by: 2) {
                    swapped.storeBytes(of: raw.loadUnaligned(fromByteOffset: start + i, as: UInt16.self).bigEndian, toByteOffset: i, as: UInt16.self)
                }
                try stream.write(UnsafeRawBufferPointer(swapped))
            }
        }
    }
}
