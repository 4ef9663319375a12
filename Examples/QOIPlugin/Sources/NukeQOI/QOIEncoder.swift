import Foundation
import NukeCore
import NukePixels

/// Writes QOI: RGBA when the image has alpha, else RGB; 16-bit and gray images are converted to
/// 8-bit RGB(A), premultiplied alpha is made straight.
public struct QOIEncoder: ImageEncoding {
    public init() {}

    public func encode(_ image: Image) throws -> Data {
        var bitmap = image.bitmap
        if bitmap.alphaMode == .premultiplied { bitmap = bitmap.unpremultiplied() }
        let channels = bitmap.pixelFormat.hasAlpha ? 4 : 3
        bitmap = bitmap.converted(to: channels == 4 ? .rgba8 : .rgb8)
        guard bitmap.width > 0, bitmap.height > 0, bitmap.width <= Int(UInt32.max), bitmap.height <= Int(UInt32.max) else {
            throw ImageCodecError(.encodingFailed, stage: .encoding, format: .qoi, codec: "NukeQOI",
                                  message: "QOI cannot hold a \(bitmap.width)×\(bitmap.height) image")
        }
        var out = Array("qoif".utf8)
        for value in [bitmap.width, bitmap.height] { out += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        out += [UInt8(channels), 0]
        var index = [SIMD4<UInt8>](repeating: .zero, count: 64)
        var previous = SIMD4<UInt8>(0, 0, 0, 255)
        var run = 0
        bitmap.withUnsafeBytes { rows in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let at = y * bitmap.bytesPerRow + x * channels
                    let pixel = SIMD4(rows[at], rows[at + 1], rows[at + 2], channels == 4 ? rows[at + 3] : 255)
                    if pixel == previous {
                        run += 1
                        if run == 62 { out.append(QOIOp.run | 61); run = 0 }
                        continue
                    }
                    if run > 0 { out.append(QOIOp.run | UInt8(run - 1)); run = 0 }
                    let hash = QOIOp.hash(pixel)
                    if index[hash] == pixel {
                        out.append(QOIOp.index | UInt8(hash))
                    } else if pixel.w == previous.w {
                        out += Self.difference(pixel, from: previous)
                    } else {
                        out += [QOIOp.rgba, pixel.x, pixel.y, pixel.z, pixel.w]
                    }
                    index[hash] = pixel
                    previous = pixel
                }
            }
        }
        if run > 0 { out.append(QOIOp.run | UInt8(run - 1)) }
        return Data(out + QOIOp.end)
    }

    /// `pixel` as a small difference from `previous` (same alpha), else as RGB.
    private static func difference(_ pixel: SIMD4<UInt8>, from previous: SIMD4<UInt8>) -> [UInt8] {
        let d = SIMD4<Int8>(truncatingIfNeeded: pixel &- previous)
        let (dr, dg, db) = (Int(d.x), Int(d.y), Int(d.z))
        if (-2...1).contains(dr), (-2...1).contains(dg), (-2...1).contains(db) {
            return [QOIOp.diff | UInt8((dr + 2) << 4 | (dg + 2) << 2 | (db + 2))]
        }
        let (rg, bg) = (dr - dg, db - dg)
        if (-32...31).contains(dg), (-8...7).contains(rg), (-8...7).contains(bg) {
            return [QOIOp.luma | UInt8(dg + 32), UInt8((rg + 8) << 4 | (bg + 8))]
        }
        return [QOIOp.rgb, pixel.x, pixel.y, pixel.z]
    }
}
