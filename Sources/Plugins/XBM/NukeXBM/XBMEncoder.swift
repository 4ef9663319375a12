#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels

extension ImageEncoders {
    /// Writes X11 bitmaps (XBM): a pixel darker than mid-gray (Rec. 601 luma below 128, alpha
    /// composited over white) is a set bit, drawn black; the rest are clear (white).
    public struct XBM: ImageEncoding {
        /// The C identifier the `#define`s and the array are named after.
        public var name: String

        /// Creates an encoder; XBM has no options.
        public init(options: ImageEncodingOptions = ImageEncodingOptions(), name: String = "image") {
            self.name = name.isEmpty ? "image" : name
        }

        public func encode(_ image: Image) throws -> Data {
            var bitmap = image.bitmap
            guard bitmap.width > 0, bitmap.height > 0 else {
                throw XBMLibrary.encodingError("cannot write an empty \(bitmap.width)×\(bitmap.height) image")
            }
            if bitmap.alphaMode == .premultiplied { bitmap = bitmap.unpremultiplied() }
            let hasAlpha = bitmap.pixelFormat.hasAlpha
            let gray = bitmap.converted(to: hasAlpha ? .grayAlpha8 : .gray8)
            let width = gray.width, height = gray.height, channels = hasAlpha ? 2 : 1
            var text = "#define \(name)_width \(width)\n#define \(name)_height \(height)\nstatic char \(name)_bits[] = {\n"
            let hex = Array("0123456789abcdef".utf8)
            var body = [UInt8]()
            let perRow = (width + 7) / 8
            body.reserveCapacity(perRow * height * 6)
            var count = 0
            gray.withUnsafeBytes { raw in
                for y in 0..<height {
                    let row = y * gray.bytesPerRow
                    for unit in 0..<perRow {
                        var value = 0
                        for bit in 0..<min(8, width - 8 * unit) {
                            let at = row + channels * (8 * unit + bit)
                            var luma = Int(raw[at])
                            if hasAlpha {
                                let alpha = Int(raw[at + 1])
                                luma = (luma * alpha + 255 * (255 - alpha) + 127) / 255
                            }
                            if luma < 128 { value |= 1 << bit }
                        }
                        if count > 0 { body += count % 12 == 0 ? Array(",\n".utf8) : Array(", ".utf8) }
                        body += [UInt8(ascii: "0"), UInt8(ascii: "x"), hex[value >> 4], hex[value & 15]]
                        count += 1
                    }
                }
            }
            text += String(decoding: body, as: UTF8.self) + " };\n"
            return Data(text.utf8)
        }
    }
}
