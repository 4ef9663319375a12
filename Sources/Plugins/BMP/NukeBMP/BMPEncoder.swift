#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels

extension ImageEncoders {
    /// Writes BMP: 8-bit with a gray palette for gray images, 24-bit for opaque colour ones,
    /// 32-bit `BI_BITFIELDS` with an alpha mask in a V5 header for images with alpha (straight
    /// alpha, as the format stores it). A V5 header also carries the image's RGB ICC profile
    /// (`PROFILE_EMBEDDED`) when the options keep it. Rows are written bottom-up, streamed
    /// from the bitmap a batch at a time.
    public struct BMP: ImageEncoding {
        /// The options; BMP uses the metadata policy and `ImageEncodingOptions.preservesColorProfile`.
        public var options: ImageEncodingOptions

        /// Creates an encoder.
        public init(options: ImageEncodingOptions = ImageEncodingOptions()) {
            self.options = options
        }

        public func encode(_ image: Image) throws -> Data {
            return try DataOutputStream.collecting { try encode(image, to: &$0) }
        }

        public func encode(_ image: Image, to stream: inout some ImageOutputStream) throws {
            let source = image.bitmap
            guard source.width > 0, source.height > 0 else {
                throw BMPLibrary.encodingError("cannot write an empty \(source.width)×\(source.height) image")
            }
            guard source.width <= Int(Int32.max), source.height <= Int(Int32.max) else {
                throw BMPLibrary.encodingError("\(source.width)×\(source.height) is too large for BMP")
            }
            let format = source.pixelFormat
            let gray = format.channels == .gray
            let alpha = format.hasAlpha
            let target: PixelFormat = gray ? .gray8 : (alpha ? .rgba8 : .rgb8)
            let icc = gray ? nil : image.metadataToWrite(options: options, writesGray: false).iccProfile
            let bitCount = gray ? 8 : (alpha ? 32 : 24)
            let rowBytes = ((source.width * bitCount + 31) / 32) * 4
            let (pixelBytes, o1) = rowBytes.multipliedReportingOverflow(by: source.height)
            let headerSize = alpha || icc != nil ? 124 : 40
            let paletteBytes = gray ? 1024 : 0
            let pixelOffset = 14 + headerSize + paletteBytes
            let (fileSize, o2) = (pixelOffset + (icc?.count ?? 0)).addingReportingOverflow(pixelBytes)
            guard !o1, !o2, fileSize <= Int(UInt32.max) else {
                throw BMPLibrary.encodingError("\(source.width)×\(source.height) is too large for a BMP file")
            }

            var header = [UInt8]()
            header.reserveCapacity(pixelOffset)
            func le16(_ v: Int) { header += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
            func le32(_ v: UInt32) { header += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
            header += [UInt8(ascii: "B"), UInt8(ascii: "M")]
            le32(UInt32(fileSize))
            le32(0)
            le32(UInt32(pixelOffset))
            le32(UInt32(headerSize))
            le32(UInt32(source.width))
            le32(UInt32(source.height))   // positive: bottom-up
            le16(1)
            le16(bitCount)
            le32(alpha ? 3 : 0)             // BI_BITFIELDS or BI_RGB
            le32(UInt32(pixelBytes))
            le32(2835)                      // 72 dpi
            le32(2835)
            le32(gray ? 256 : 0)
            le32(0)
            if headerSize == 124 {
                if alpha {
                    le32(0x00FF_0000); le32(0x0000_FF00); le32(0x0000_00FF); le32(0xFF00_0000)
                } else {
                    le32(0); le32(0); le32(0); le32(0)
                }
                le32(icc != nil ? 0x4D42_4544 : 0x7352_4742)   // 'MBED' or 'sRGB'
                header += [UInt8](repeating: 0, count: 36 + 12)  // endpoints, gamma
                le32(4)                                          // LCS_GM_IMAGES
                le32(UInt32(icc != nil ? headerSize + paletteBytes + pixelBytes : 0))
                le32(UInt32(icc?.count ?? 0))
                le32(0)
            }
            if gray {
                for v in 0..<256 { header += [UInt8(v), UInt8(v), UInt8(v), 0] }
            }
            try header.withUnsafeBytes { try stream.write($0) }

            // Rows bottom-up, a batch converted at a time when the layout differs.
            let row = UnsafeMutableRawBufferPointer.allocate(byteCount: rowBytes, alignment: 4)
            defer { row.deallocate() }
            row.initializeMemory(as: UInt8.self, repeating: 0)
            let batch = 64
            var top = source.height
            while top > 0 {
                let start = max(0, top - batch)
                var rows = source.rows(start..<top)
                if rows.alphaMode == .premultiplied { rows = rows.unpremultiplied() }
                if rows.pixelFormat != target { rows = rows.converted(to: target) }
                try rows.withUnsafeBytes { raw in
                    for y in stride(from: rows.height - 1, through: 0, by: -1) {
                        let src = y * rows.bytesPerRow
                        switch bitCount {
                        case 8:
                            for x in 0..<rows.width { row[x] = raw[src + x] }
                        case 24:
                            for x in 0..<rows.width {
                                row[3 * x] = raw[src + 3 * x + 2]
                                row[3 * x + 1] = raw[src + 3 * x + 1]
                                row[3 * x + 2] = raw[src + 3 * x]
                            }
                        default:
                            for x in 0..<rows.width {
                                row[4 * x] = raw[src + 4 * x + 2]
                                row[4 * x + 1] = raw[src + 4 * x + 1]
                                row[4 * x + 2] = raw[src + 4 * x]
                                row[4 * x + 3] = raw[src + 4 * x + 3]
                            }
                        }
                        try stream.write(UnsafeRawBufferPointer(row))
                    }
                }
                top = start
            }
            if let icc {
                try icc.withUnsafeBytes { try stream.write($0) }
            }
        }
    }
}
