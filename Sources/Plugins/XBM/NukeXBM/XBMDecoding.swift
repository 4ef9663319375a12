#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NukeCore
import NukePixels
import NukePluginKit

/// Decodes a complete XBM file: the header, the limits, then the array's values straight into
/// gray rows: a set bit is black (the X11 foreground), a clear bit white.
struct XBMDecoding {
    let context: ImageDecodingContext

    func decode(_ data: Data) throws(ImageCodecError) -> ImageContainer {
        let (header, bitmap) = try bitmap(data)
        var userInfo: [ImageContainer.UserInfoKey: any Sendable] = [.isProgressiveKey: false, .xbmIsX10Key: header.isX10]
        if let hotspot = header.hotspot {
            userInfo[.xbmHotspotXKey] = hotspot.x
            userInfo[.xbmHotspotYKey] = hotspot.y
        }
        return ImageContainer(image: Image(bitmap: bitmap), type: .xbm, isPreview: false, userInfo: userInfo)
    }

    func bitmap(_ data: Data) throws(ImageCodecError) -> (XBMHeaderParser.Header, Bitmap) {
        let header = try XBMHeaderParser.read(data).get(XBMLibrary.self, byteCount: data.count)
        try context.limits.check(width: header.width, height: header.height, bytesPerPixel: 1, format: .xbm,
                                 codec: XBMLibrary.codecName, inputByteCount: data.count)
        let bitsPerValue = header.isX10 ? 16 : 8
        let valuesPerRow = (header.width + bitsPerValue - 1) / bitsPerValue
        let width = header.width, height = header.height
        let context = self.context
        let bitmap = try context.allocator.makeBitmap(width: width, height: height, pixelFormat: .gray8) { (out) throws(ImageCodecError) in
            try data.withBytes { (b) throws(ImageCodecError) in
                var i = header.valuesOffset
                /// The next value, or `nil` at `}`.
                func next() throws(ImageCodecError) -> Int? {
                    while true {
                        guard i < b.count else { throw XBMLibrary.error(.incomplete, "the data ends inside the bits array") }
                        let c = b[i]
                        if c == UInt8(ascii: "}") { return nil }
                        if c == UInt8(ascii: ",") || c == 0x20 || (0x09...0x0D).contains(c) { i += 1; continue }
                        if c == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "*") {
                            i += 2
                            while i + 1 < b.count, !(b[i] == UInt8(ascii: "*") && b[i + 1] == UInt8(ascii: "/")) { i += 1 }
                            i += 2
                            continue
                        }
                        break
                    }
                    var value = 0, digits = 0
                    if b[i] == UInt8(ascii: "0"), i + 1 < b.count, b[i + 1] | 0x20 == UInt8(ascii: "x") {
                        i += 2
                        while i < b.count, digits < 8 {
                            let c = b[i] | 0x20
                            let d: Int
                            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { d = Int(b[i] - UInt8(ascii: "0")) }
                            else if (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(c) { d = Int(c - UInt8(ascii: "a")) + 10 }
                            else { break }
                            value = value << 4 | d
                            digits += 1
                            i += 1
                        }
                    } else {
                        while i < b.count, digits < 10, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) {
                            value = value * 10 + Int(b[i] - UInt8(ascii: "0"))
                            digits += 1
                            i += 1
                        }
                    }
                    guard digits > 0 else {
                        if i >= b.count { throw XBMLibrary.error(.incomplete, "the data ends inside the bits array") }
                        throw XBMLibrary.error(.corrupt, "unexpected '\(Character(Unicode.Scalar(b[i])))' in the bits array at offset \(i)")
                    }
                    return value
                }
                for y in 0..<height {
                    if y & 63 == 0 { try XBMLibrary.checkCancellation(context) }
                    let row = y * width
                    for unit in 0..<valuesPerRow {
                        guard let value = try next() else {
                            throw XBMLibrary.error(.incomplete, "the bits array ends after \(y * valuesPerRow + unit) of its \(height * valuesPerRow) values")
                        }
                        let x0 = unit * bitsPerValue
                        for bit in 0..<min(bitsPerValue, width - x0) {
                            out[row + x0 + bit] = (value >> bit) & 1 == 1 ? 0 : 255
                        }
                    }
                }
            }
        }
        return (header, bitmap)
    }
}
