#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels

extension ImageEncoders {
    /// Writes an ICO (or, with a hotspot, a CUR) file of one entry up to 256×256: a 32-bit DIB
    /// with straight alpha and the AND mask that older readers use (transparent pixels set), or —
    /// for a 256-pixel side, as Windows writes them — a PNG entry when the encoder registry has
    /// a PNG encoder (NukePNG linked).
    public struct ICO: ImageEncoding {
        /// The options, passed to the PNG encoder of a PNG entry.
        public var options: ImageEncodingOptions
        /// `nil` for an icon; a cursor's hotspot for CUR.
        public var hotspot: CursorHotspot?
        /// Where a PNG entry's encoder comes from.
        public var pngEncoders: ImageEncoderRegistry

        /// Creates an encoder of icons, or of cursors with `hotspot`.
        public init(options: ImageEncodingOptions = ImageEncodingOptions(), hotspot: CursorHotspot? = nil,
                    pngEncoders: ImageEncoderRegistry = .shared) {
            self.options = options
            self.hotspot = hotspot
            self.pngEncoders = pngEncoders
        }

        public func encode(_ image: Image) throws -> Data {
            var bitmap = image.bitmap
            let format: ImageType = hotspot == nil ? .ico : .cur
            guard bitmap.width > 0, bitmap.height > 0, bitmap.width <= 256, bitmap.height <= 256 else {
                throw ICOLibrary.encodingError(format: format,
                                       "an ICO entry is 1 to 256 pixels a side, the image is \(bitmap.width)×\(bitmap.height)")
            }
            if bitmap.alphaMode == .premultiplied { bitmap = bitmap.unpremultiplied() }
            if bitmap.pixelFormat != .rgba8 { bitmap = bitmap.converted(to: .rgba8) }
            let width = bitmap.width, height = bitmap.height
            var entry: Data
            var bitCount = 32
            if max(width, height) == 256, let png = pngEncoders.encoder(for: .png, options: options) {
                entry = try png.encode(Image(bitmap: bitmap, colorInfo: image.colorInfo))
                bitCount = 32
            } else {
                entry = Data()
                entry.reserveCapacity(40 + width * height * 4 + height * ((width + 31) / 32) * 4)
                func le16(_ v: Int) { entry += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
                func le32(_ v: Int) { entry += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
                let maskStride = ((width + 31) / 32) * 4
                le32(40); le32(width); le32(2 * height); le16(1); le16(32); le32(0)
                le32(width * height * 4 + maskStride * height); le32(0); le32(0); le32(0); le32(0)
                var mask = [UInt8](repeating: 0, count: maskStride * height)
                bitmap.withUnsafeBytes { raw in
                    var row = [UInt8](repeating: 0, count: 4 * width)
                    for y in stride(from: height - 1, through: 0, by: -1) {
                        let src = y * bitmap.bytesPerRow
                        let fileRow = height - 1 - y
                        for x in 0..<width {
                            row[4 * x] = raw[src + 4 * x + 2]
                            row[4 * x + 1] = raw[src + 4 * x + 1]
                            row[4 * x + 2] = raw[src + 4 * x]
                            row[4 * x + 3] = raw[src + 4 * x + 3]
                            if raw[src + 4 * x + 3] == 0 { mask[fileRow * maskStride + x >> 3] |= 0x80 >> UInt8(x & 7) }
                        }
                        entry += row
                    }
                }
                entry += mask
            }
            var file = Data([0, 0, hotspot == nil ? 1 : 2, 0, 1, 0])
            let x = hotspot?.x ?? 1, y = hotspot?.y ?? bitCount   // planes and bit count for an icon
            file += [UInt8(width & 0xFF), UInt8(height & 0xFF), 0, 0]
            file += [UInt8(x & 0xFF), UInt8(x >> 8 & 0xFF), UInt8(y & 0xFF), UInt8(y >> 8 & 0xFF)]
            let size = entry.count, offset = 22
            file += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24 & 0xFF)]
            file += [UInt8(offset), 0, 0, 0]
            return file + entry
        }
    }
}
