import Foundation
import NukeCore

/// Small hostile files for every format, built here from the fixtures: huge images, huge frame
/// and scan counts, expansion without end, entity expansion and deep nesting. Under
/// `ImageLimits.untrusted` each must fail fast with a limit or format error before any pixel
/// memory is asked for (`Tests/BombTests`), and allocate less than 1 MB on the way
/// (`swift run -c release NukeBombAllocations`, which counts every malloc).
public enum Bombs {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ path: String) -> Data {
        (try? Data(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(path))) ?? Data()
    }

    static func crc32(_ bytes: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    /// JPEG: the SOF's height and width patched to 65,000 × 65,000.
    static var jpeg: Data {
        var data = fixture("jpeg/baseline-420.jpg")
        var i = 2
        while i + 9 < data.count {
            let marker = data[i + 1]
            if marker == 0xC0 || marker == 0xC2 {
                data.replaceSubrange((i + 5)..<(i + 9), with: [0xFD, 0xE8, 0xFD, 0xE8])
                break
            }
            i += 2 + (Int(data[i + 2]) << 8 | Int(data[i + 3]))
        }
        return data
    }

    /// A PNG fixture whose IHDR says `side × side`, with a valid CRC.
    static func png(_ path: String, side: UInt32) -> Data {
        var data = fixture(path)
        data.replaceSubrange(16..<24, with: be32(side) + be32(side))
        data.replaceSubrange(29..<33, with: be32(crc32(data[12..<29])))
        return data
    }

    /// PNG: IHDR patched to 100,000 × 100,000.
    static var png: Data { png("png/rgba-8.png", side: 100_000) }

    /// GIF: the logical screen patched to 65,535 × 65,535.
    static var gif: Data {
        var data = fixture("gif/dispose-background.gif")
        data.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF])
        return data
    }

    /// Animated WebP: a VP8X canvas of 16,384 × 16,384 and no frames, 200 bytes.
    static var webp: Data {
        var data = Data("RIFF".utf8) + Data(count: 4) + Data("WEBPVP8X".utf8)
        data += [10, 0, 0, 0, 0x12, 0, 0, 0] + [0xFF, 0x3F, 0x00, 0xFF, 0x3F, 0x00]
        data += Data("ANIM".utf8) + [6, 0, 0, 0, 0, 0, 0, 0, 0, 0] + Data(count: 160)
        let size = UInt32(data.count - 8)
        data.replaceSubrange(4..<8, with: withUnsafeBytes(of: size.littleEndian) { Data($0) })
        return data
    }

    /// JPEG XL: a bare codestream whose SizeHeader declares 100,000 × 100,000 (`FF 0A`; small 0,
    /// height − 1 and width − 1 in 18 bits after the U32 selector 2, aspect ratio 0; ImageMetadata
    /// all default), 24 bytes.
    static var jxl: Data {
        // Fields least significant bit first: (value, bits).
        let fields: [(UInt64, Int)] = [(0, 1), (2, 2), (99_999, 18), (0, 3), (2, 2), (99_999, 18), (1, 1)]
        var accumulator: UInt64 = 0, count = 0
        for (value, bits) in fields {
            accumulator |= value << UInt64(count)
            count += bits
        }
        var data = Data([0xFF, 0x0A])
        while count > 0 {
            data.append(UInt8(accumulator & 0xFF))
            accumulator >>= 8
            count -= 8
        }
        return data + Data(count: 16)
    }

    /// JPEG XL: the same codestream in the container (signature box, `ftyp`, `jxlc`).
    static var jxlContainer: Data {
        let codestream = jxl
        var data = Data([0, 0, 0, 0x0C]) + Data("JXL ".utf8) + [0x0D, 0x0A, 0x87, 0x0A]
        data += be32(20) + Data("ftyp".utf8) + Data("jxl ".utf8) + be32(0) + Data("jxl ".utf8)
        data += be32(UInt32(8 + codestream.count)) + Data("jxlc".utf8) + codestream
        return data
    }

    /// HEIC: the ispe property patched to 60,000 × 60,000.
    static var heic: Data {
        var data = fixture("heif/photo.heic")
        if let range = data.range(of: Data("ispe".utf8)) {
            let at = range.upperBound + 4
            data.replaceSubrange(at..<(at + 8), with: be32(60_000) + be32(60_000))
        }
        return data
    }

    /// SVG: a 100,000 × 100,000 document of 100 bytes.
    static var svg: Data {
        Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="1" height="1"/></svg>"#.utf8)
    }

    /// PNG whose pixels would expand 100,000 times: a 6,000 × 6,000 grey image, the rest cut.
    static var pngExpansion: Data { png("png/gray-2.png", side: 6_000) }

    /// GIF: 200 frames of 1 × 1 (4.6 KB), twice the untrusted frame limit.
    static var gifFrames: Data {
        var data = Data("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        for _ in 0..<200 {
            data += [0x21, 0xF9, 0x04, 0x00, 0x0A, 0x00, 0x00, 0x00]           // graphic control: 100 ms
            data += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0] + [0x02, 0x02, 0x44, 0x01, 0x00]   // 1 × 1, index 0
        }
        return data + [0x3B]
    }

    /// JPEG: a progressive file of 5,000 scans (`scripts/make-fixtures.py`).
    static var jpegScans: Data { fixture("jpeg/progressive-scan-bomb.jpg") }

    /// SVG: "billion laughs", ten levels of entities each repeating the last ten times (10¹⁰ bytes).
    static var svgLaughs: Data {
        var text = #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lollollollollollollollollollol">"#
        let names = "abcdefghij".map(String.init)
        for level in 1..<names.count {
            text += "<!ENTITY \(names[level]) \"" + String(repeating: "&\(names[level - 1]);", count: 10) + "\">"
        }
        text += #"]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&j;</text></svg>"#
        return Data(text.utf8)
    }

    /// SVG: 5,000 nested groups.
    static var svgDeep: Data {
        Data((#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">"# + String(repeating: "<g>", count: 5_000)
            + #"<rect width="5" height="5"/>"# + String(repeating: "</g>", count: 5_000) + "</svg>").utf8)
    }

    /// TIFF: rgb-none.tif (its directory first) with ImageWidth and ImageLength patched to
    /// 100,000 (LONG values).
    static var tiff: Data {
        var data = fixture("tiff/rgb-none.tif")
        guard data.count > 10 else { return data }
        let entries = Int(data[8]) | Int(data[9]) << 8
        for i in 0..<entries where 10 + 12 * i + 12 <= data.count {
            let entry = 10 + 12 * i
            let tag = Int(data[entry]) | Int(data[entry + 1]) << 8
            guard tag == 256 || tag == 257 else { continue }
            data.replaceSubrange((entry + 2)..<(entry + 12), with: [4, 0, 1, 0, 0, 0, 0xA0, 0x86, 0x01, 0x00])
        }
        return data
    }

    /// BMP: the DIB header patched to 60,000 × 60,000.
    static var bmp: Data {
        var data = fixture("bmp/pil-24.bmp")
        data.replaceSubrange(18..<26, with: [0x60, 0xEA, 0, 0, 0x60, 0xEA, 0, 0])
        return data
    }

    /// BMP: a 4,000 × 4,000 RLE8 image (64 MB decoded) of 70 bytes: one end-of-bitmap escape.
    static var bmpRLE: Data {
        var data = Data("BM".utf8) + [70, 0, 0, 0, 0, 0, 0, 0, 62, 0, 0, 0]
        data += [40, 0, 0, 0, 0xA0, 0x0F, 0, 0, 0xA0, 0x0F, 0, 0, 1, 0, 8, 0, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 20)
        data += [0, 0, 0, 0, 255, 255, 255, 0]   // two palette entries
        return data + [0, 1, 0, 0, 0, 0, 0, 0]
    }

    /// ICO: its one DIB entry's header patched to 60,000 × 60,000 (the height doubled, as icons store it).
    static var ico: Data {
        var data = fixture("ico/dib-32-alpha.ico")
        data.replaceSubrange(26..<34, with: [0x60, 0xEA, 0, 0, 0xC0, 0xD4, 0x01, 0])
        return data
    }

    /// XBM: `#define`s of 100,000 × 100,000 and one value.
    static var xbm: Data {
        Data("#define bomb_width 100000\n#define bomb_height 100000\nstatic char bomb_bits[] = { 0x01 };\n".utf8)
    }

    /// Every bomb: its name, its bytes, and the error it must end in.
    public static let all: [(name: String, data: Data, code: ImageCodecError.Code)] = [
        ("JPEG 65000x65000", jpeg, .limitExceeded), ("JPEG 5000 scans", jpegScans, .limitExceeded),
        ("PNG 100000x100000", png, .limitExceeded), ("PNG expanding 100000 times", pngExpansion, .limitExceeded),
        ("GIF 65535x65535 screen", gif, .limitExceeded), ("GIF 200 frames", gifFrames, .limitExceeded),
        ("WebP 16384x16384 canvas", webp, .limitExceeded), ("HEIC 60000x60000", heic, .limitExceeded),
        ("SVG 100000x100000", svg, .limitExceeded), ("SVG billion laughs", svgLaughs, .corrupt),
        ("SVG 5000 nested groups", svgDeep, .corrupt), ("TIFF 100000x100000", tiff, .limitExceeded),
        ("BMP 60000x60000", bmp, .limitExceeded), ("BMP RLE8 expanding 900000 times", bmpRLE, .limitExceeded),
        ("ICO 60000x60000 entry", ico, .limitExceeded), ("XBM 100000x100000", xbm, .limitExceeded),
        ("JXL 100000x100000", jxl, .limitExceeded), ("JXL 100000x100000 in the container", jxlContainer, .limitExceeded),
    ]
}
