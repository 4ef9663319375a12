import Foundation
import NukeCore
import NukeJXL
import Testing

/// JPEG XL's identifier, name, extensions and signature are NukeJXL's (issue 42: format knowledge
/// stays in its plugin): linking it is what makes `ImageType(data)` know them.
struct JXLSniffingTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("codestream", [0xFF, 0x0A, 0xFA, 0x7F], .jxl),
        ("container", [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], .jxl),
    ]

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func refusesWhatOnlyLooksLikeIt() {
        #expect(ImageType(Data([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0B])) == nil, "container signature cut short")
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.jxl.name == "JPEG XL")
        #expect(ImageType(filenameExtension: "JXL") == .jxl)
    }

    /// Nuke's `AssetType.jxl`.
    @Test func theIdentifierIsNukes() {
        #expect(AssetType.jxl.rawValue == "public.jpeg-xl")
    }
}
