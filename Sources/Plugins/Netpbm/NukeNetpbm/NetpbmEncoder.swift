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
        try write(bitmap, as: .pam, to: &stream)
    }

    /// Writes `bitmap` as PPM (colour) or PGM (gray), dropping alpha.
    public static func writePNM(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
        try write(bitmap, as: .pnm, to: &stream)
    }

    /// The PAM header (`P7` … `ENDHDR`) of a `width × height` image in `pixelFormat`.
    public static func pamHeader(width: Int, height: Int, pixelFormat: PixelFormat) -> String {
        Variant.pam.header(width: width, height: height, pixelFormat: pixelFormat)
    }

    /// The two files written: PAM, the pixels as they are; PPM or PGM, alpha dropped.
    enum Variant {
        case pam, pnm

        /// PPM/PGM for the `ppm`, `pgm` and `pnm` extensions, else PAM.
        init(filenameExtension: String?) {
            self = ["ppm", "pgm", "pnm"].contains(filenameExtension?.lowercased() ?? "") ? .pnm : .pam
        }

        /// The header of a `width × height` image whose rows are in `pixelFormat`.
        func header(width: Int, height: Int, pixelFormat: PixelFormat) -> String {
            switch self {
            case .pnm:
                let format = Self.pnmFormat(of: pixelFormat)
                return "\(format.isGray ? "P5" : "P6")\n\(width) \(height)\n\(format.bitsPerChannel == 8 ? 255 : 65535)\n"
            case .pam:
                let tupleType = switch pixelFormat.channels {
                case .gray: "GRAYSCALE"
                case .grayAlpha: "GRAYSCALE_ALPHA"
                case .rgb: "RGB"
                case .rgba: "RGB_ALPHA"
                }
                let maxval = pixelFormat.bitsPerChannel == 8 ? 255 : 65535
                return "P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(pixelFormat.channelCount)\nMAXVAL \(maxval)\nTUPLTYPE \(tupleType)\nENDHDR\n"
            }
        }

        /// PPM's or PGM's samples for rows in `pixelFormat`: gray or RGB, at its depth.
        static func pnmFormat(of pixelFormat: PixelFormat) -> PixelFormat {
            let wide = pixelFormat.bitsPerChannel == 16
            return pixelFormat.isGray ? (wide ? .gray16 : .gray8) : (wide ? .rgb16 : .rgb8)
        }

        /// The samples of `bitmap`'s rows as the file holds them: straight alpha (PAM) or none
        /// (PPM/PGM), 16-bit big-endian.
        func writeSamples(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
            switch self {
            case .pam where bitmap.alphaMode == .premultiplied:
                try Netpbm.writeConverted(bitmap, to: &stream) { $0.unpremultiplied() }
            case .pnm where bitmap.pixelFormat != Self.pnmFormat(of: bitmap.pixelFormat):
                let format = Self.pnmFormat(of: bitmap.pixelFormat)
                try Netpbm.writeConverted(bitmap, to: &stream) { $0.converted(to: format) }
            default:
                try Netpbm.writeSamples(bitmap, to: &stream)
            }
        }
    }

    /// Writes `bitmap` as `variant`: the header, then the rows.
    static func write(_ bitmap: Bitmap, as variant: Variant, to stream: inout some ImageOutputStream) throws {
        try writeHeader(variant.header(width: bitmap.width, height: bitmap.height, pixelFormat: bitmap.pixelFormat), to: &stream)
        try variant.writeSamples(bitmap, to: &stream)
    }

    /// Writes a PAM, PPM or PGM file as a decode produces its rows: the `ImageRowEncoding` sink
    /// of `ImageEncoders.PAM`, so that `nuke convert X.jpg out.pam` never holds the image whole.
    /// The header goes out at `begin`, each batch of rows as it comes.
    final class RowWriter<Stream: ImageOutputStream & AnyObject>: ImageRowSink {
        private var stream: Stream
        private let variant: Variant
        private var layout: (size: ImageSize, pixelFormat: PixelFormat, alphaMode: AlphaMode)?

        init(stream: Stream, variant: Variant) {
            self.stream = stream
            self.variant = variant
        }

        func begin(width: Int, height: Int, pixelFormat: PixelFormat, alphaMode: AlphaMode) throws(ImageCodecError) {
            layout = (ImageSize(width: width, height: height), pixelFormat, alphaMode)
            try writing { (stream: inout Stream) throws in
                try Netpbm.writeHeader(variant.header(width: width, height: height, pixelFormat: pixelFormat), to: &stream)
            }
        }

        func write(rows: UnsafeRawBufferPointer, count: Int, bytesPerRow: Int) throws(ImageCodecError) {
            guard let layout, count > 0, let base = rows.baseAddress else { return }
            // The rows, in place, as a bitmap (the storage never frees them).
            let storage = PixelStorage(adopting: UnsafeMutableRawPointer(mutating: base), byteCount: rows.count) { _ in }
            let bitmap = Bitmap(width: layout.size.width, height: count, pixelFormat: layout.pixelFormat, alphaMode: layout.alphaMode,
                                bytesPerRow: bytesPerRow, storage: storage)
            try writing { (stream: inout Stream) throws in try variant.writeSamples(bitmap, to: &stream) }
        }

        private func writing(_ body: (inout Stream) throws -> Void) throws(ImageCodecError) {
            do {
                try body(&stream)
            } catch {
                throw ImageCodecError(.internalFailure, stage: .encoding, format: .netpbm, message: "writing the file failed: \(error)")
            }
        }
    }

    static func writeHeader(_ header: String, to stream: inout some ImageOutputStream) throws {
        var header = header
        try header.withUTF8 { try stream.write(UnsafeRawBufferPointer($0)) }
    }

    /// Converts `bitmap` `batchRows` rows at a time and writes each batch's samples.
    static func writeConverted(_ bitmap: Bitmap, to stream: inout some ImageOutputStream, _ convert: (Bitmap) -> Bitmap) throws {
        var y = 0
        while y < bitmap.height {
            let count = min(batchRows, bitmap.height - y)
            try writeSamples(convert(bitmap.rows(y..<(y + count))), to: &stream)
            y += count
        }
    }

    /// Writes the samples of every row, without padding; 16-bit ones big-endian.
    static func writeSamples(_ bitmap: Bitmap, to stream: inout some ImageOutputStream) throws {
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
    /// 8 or 16 bits (big-endian), straight alpha; or PPM/PGM, alpha dropped, when the options'
    /// `ImageEncodingOptions.filenameExtension` is `ppm`, `pgm` or `pnm`. Streams
    /// from the bitmap's storage, or from a decode's rows (`ImageRowEncoding`).
    public struct PAM: ImageRowEncoding {
        private let variant: Netpbm.Variant

        /// Creates an encoder; the options' file extension chooses PAM or PPM/PGM.
        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            variant = Netpbm.Variant(filenameExtension: options.filenameExtension)
        }

        public func encode(_ image: Image) throws -> Data {
            variant == .pam ? Netpbm.pam(image.bitmap) : Netpbm.pnm(image.bitmap)
        }

        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            try Netpbm.write(image.bitmap, as: variant, to: &stream)
        }

        public func rowSink<Stream: ImageOutputStream & AnyObject>(writingTo stream: Stream) -> any ImageRowSink {
            Netpbm.RowWriter(stream: stream, variant: variant)
        }
    }
}
