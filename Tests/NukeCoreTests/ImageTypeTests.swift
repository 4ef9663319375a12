import Foundation
import Testing
@testable import NukeCore

struct ImageTypeTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("jpeg", [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 0x4A, 0x46, 0x49, 0x46, 0, 1], .jpeg),
        ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D], .png),
        ("gif87a", Array("GIF87a".utf8) + [1, 0, 1, 0, 0, 0], .gif),
        ("gif89a", Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0], .gif),
        ("webp", Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        ("heic", ftyp("heic", ["mif1", "heic"]), .heic),
        ("heix", ftyp("heix", ["mif1", "heix"]), .heic),
        ("mif1 with heic", ftyp("mif1", ["mif1", "heic"]), .heic),
        ("mif1 alone", ftyp("mif1", ["mif1"]), .heif),
        ("msf1", ftyp("msf1", ["msf1"]), .heif),
        ("avif", ftyp("avif", ["mif1", "avif"]), .avif),
        ("avis", ftyp("avis", ["avis", "msf1"]), .avif),
        ("mif1 with avif", ftyp("mif1", ["mif1", "miaf", "avif"]), .avif),
        ("tiff le", [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0], .tiff),
        ("tiff be", [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8], .tiff),
        ("bigtiff", [0x49, 0x49, 0x2B, 0, 8, 0, 0, 0], .tiff),
        ("jxl codestream", [0xFF, 0x0A, 0xFA, 0x7F], .jxl),
        ("jxl container", [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], .jxl),
        ("bmp v3", [0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0], .bmp),
        ("bmp core", [0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x1A, 0, 0, 0, 12, 0, 0, 0], .bmp),
        ("ico", [0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0], .ico),
        ("cur", [0, 0, 2, 0, 1, 0, 32, 32, 0, 0, 4, 0, 4, 0], .cur),
        ("xbm", Array("/* icon */\n#define icon_width 16\n#define icon_height 16\n".utf8), .xbm),
    ]

    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0]
            + compatible.flatMap { Array($0.utf8) }
    }

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func rejectsUnknownAndShortData() {
        #expect(ImageType(Data()) == nil)
        #expect(ImageType(Data([0xFF, 0xD8])) == nil)
        #expect(ImageType(Data("hello world, not an image".utf8)) == nil)
        #expect(ImageType(Data(Self.ftyp("mp42", ["isom", "mp42"]))) == nil)
        #expect(ImageType(Data(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8))) == nil)
        // "BM" followed by a header size no BMP version uses; an icon directory without entries.
        #expect(ImageType(Data([0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 41, 0, 0, 0])) == nil)
        #expect(ImageType(Data([0, 0, 1, 0, 0, 0, 16, 16, 0, 0])) == nil)
        #expect(ImageType(Data("#define NAME value\n".utf8)) == nil)
    }

    static let svgDocuments: [String] = [
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        "\u{FEFF}<svg width=\"1\" height=\"1\"></svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg/>",
        "  \n<!-- a comment with <svg> inside -->\n<svg>",
        "<?xml version=\"1.0\"?><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\"><svg>",
        "<!DOCTYPE svg [ <!ENTITY a \"b\"> <!ELEMENT x (y)> ]><svg>",
        "<?xml-stylesheet href=\"a.css\"?><svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\">",
    ]

    @Test(arguments: svgDocuments)
    func sniffsSVG(_ text: String) {
        #expect(ImageType(Data(text.utf8)) == .svg)
    }

    static let notSVG: [String] = [
        "<html><svg></svg></html>",
        "<?xml version=\"1.0\"?><svgx/>",
        "<!-- <svg> -->",
        "<?xml version=\"1.0\"?>",
        "svg",
        "<!DOCTYPE html><html>",
    ]

    @Test(arguments: notSVG)
    func rejectsNonSVG(_ text: String) {
        #expect(ImageType(Data(text.utf8)) == nil)
    }

    @Test func customTypeIsSniffedAndNamed() {
        let qoi = ImageType(rawValue: "org.qoiformat.qoi.test")
        ImageType.register(qoi, name: "QOI", filenameExtensions: ["QOI"]) { $0.starts(with: Array("qoif".utf8)) }
        #expect(ImageType(Data("qoif\0\0".utf8)) == qoi)
        #expect(qoi.name == "QOI")
        #expect(ImageType(filenameExtension: "qoi") == qoi)
        // Built-in signatures still win.
        #expect(ImageType(Data([0xFF, 0xD8, 0xFF, 0xDB])) == .jpeg)
    }

    @Test func filenameExtensions() {
        #expect(ImageType(filenameExtension: "JPG") == .jpeg)
        #expect(ImageType(filenameExtension: "jpeg") == .jpeg)
        #expect(ImageType(filenameExtension: "png") == .png)
        #expect(ImageType(filenameExtension: "avif") == .avif)
        #expect(ImageType(filenameExtension: "txt") == nil)
        #expect(ImageType.jpeg.filenameExtensions.first == "jpg")
    }
}
