#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels

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
        try writeHeader(pamHeader(width: bitmap.width, height: bitmap.height, pixelFormat: bitmap.pixelFormat), to: &stream)
        try writePAMSamples(bitmap, to: &stream)
    }

    /// The PAM header (`P7` … `ENDHDR`) of a `width × height` image in `pixelFormat`.
    public static func pamHeader(width: Int, height: Int, pixelFormat: PixelFormat) -> String {
        let tupleType: String
        switch pixelFormat.channels {
        case .gray: tupleType = "GRAYSCALE"
        case .grayAlpha: tupleType = "GRAYSCALE_ALPHA"
        case .rgb: tupleType = "RGB"
        case .rgba: tupleType = "RGB_ALPHA"
        }
        let maxval = pixelFormat.bitsPerChannel == 8 ? 255 : 65535
        return "P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(pixelFormat.channelCount)\nMAXVAL \(maxval)\nTUPLTYPE \(tupleType)\nENDHDR\n"
    }

    /// The samples of `bitmap`'s rows as PAM holds them: straight alpha, 16-bit big-endian.
    private static func writePAMSamples(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
        if bitmap.alphaMode == .premultiplied {
            try writeConverted(bitmap, to: &stream) { $0.unpremultiplied() }
        } else {
            try writeSamples(bitmap, to: &stream)
        }
    }

    /// Writes a PAM file as a decode produces its rows: an `ImageRowSink` for
    /// `ImageDecoderRegistry.decode(_:reading:rowsTo:)`, so that
    /// `nuke convert X.jpg out.pam` never holds the image whole. The header goes out at
    /// ``begin(width:height:pixelFormat:alphaMode:)``, each batch of rows as it comes.
    public final class PAMRowWriter<Stream: ImageOutputStream>: ImageRowSink {
        /// The stream written to.
        public private(set) var stream: Stream
        /// The image's size, once the header is written.
        public private(set) var size: ImageSize?
        /// The stream's own error when a write failed (the decode then fails with `.internalFailure`).
        public private(set) var streamError: (any Error)?
        private var layout: (pixelFormat: PixelFormat, alphaMode: AlphaMode)?

        /// Creates a writer into `stream`.
        public init(stream: Stream) {
            self.stream = stream
        }

        /// Writes the PAM header for the image to come.
        ///
        /// - Throws: `.internalFailure` when the stream fails (its error is in ``streamError``).
        public func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError) {
            size = ImageSize(width: width, height: height)
            layout = (pixelFormat, alphaMode)
            try writing { (stream: inout Stream) throws in
                try Netpbm.writeHeader(Netpbm.pamHeader(width: width, height: height, pixelFormat: pixelFormat), to: &stream)
            }
        }

        /// Writes the samples of `count` rows, with straight alpha and 16-bit samples big-endian.
        ///
        /// - Throws: `.internalFailure` when the stream fails (its error is in ``streamError``).
        public func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError) {
            guard let layout, let size, count > 0, let base = rows.baseAddress else { return }
            // The rows, in place, as a bitmap (the storage never frees them).
            let storage = PixelStorage(adopting: UnsafeMutableRawPointer(mutating: base), byteCount: rows.count) { _ in }
            let bitmap = Bitmap(width: size.width, height: count, pixelFormat: layout.pixelFormat, alphaMode: layout.alphaMode,
                                bytesPerRow: bytesPerRow, storage: storage)
            try writing { (stream: inout Stream) throws in try Netpbm.writePAMSamples(bitmap, to: &stream) }
        }

        private func writing(_ body: (inout Stream) throws -> Void) throws(ImageCodecError) {
            do {
                try body(&stream)
            } catch {
                streamError = error
                throw ImageCodecError(.internalFailure, stage: .encoding, format: nil, message: "writing the PAM file failed: \(error)")
            }
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

extension ImageEncoders {
    /// Writes PAM (`P7`): the pixels exactly as they are, gray or colour, with or without alpha,
    /// 8 or 16 bits (big-endian), straight alpha. Streams from the bitmap's storage.
    public struct PAM: ImageEncoding {
        /// Creates an encoder; PAM has no options.
        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {}

        public func encode(_ image: Image) throws -> Data {
            Netpbm.pam(image.bitmap)
        }

        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            try Netpbm.writePAM(image.bitmap, to: &stream)
        }
    }
}
