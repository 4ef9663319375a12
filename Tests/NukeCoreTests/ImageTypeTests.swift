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
