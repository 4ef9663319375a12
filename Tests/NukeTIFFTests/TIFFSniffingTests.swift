import Foundation
import NukeCore
import NukeTIFF
import Testing

/// TIFF's identifier, name, extensions and signature are NukeTIFF's (issue 42: format knowledge
/// stays in its plugin): linking it is what makes `ImageType(data)` know them.
struct TIFFSniffingTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("little-endian", [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0], .tiff),
        ("big-endian", [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8], .tiff),
        ("BigTIFF", [0x49, 0x49, 0x2B, 0, 8, 0, 0, 0], .tiff),
    ]

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func refusesWhatOnlyLooksLikeIt() {
        #expect(ImageType(Data([0x49, 0x4D, 0x2A, 0, 8, 0, 0, 0])) == nil, "mixed byte order")
        #expect(ImageType(Data([0x4D, 0x4D, 0, 0x29, 0, 0, 0, 8])) == nil, "version 41")
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.tiff.name == "TIFF")
        #expect(ImageType(filenameExtension: "TIF") == .tiff)
    }
}
