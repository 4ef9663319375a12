import Foundation
import NukeCore
import NukeBMP
import Testing

/// BMP's identifier, name, extensions and signature are NukeBMP's (issue 42: format knowledge
/// stays in its plugin): linking it is what makes `ImageType(data)` know them.
struct BMPSniffingTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("V3 header", [0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0], .bmp),
        ("core header", [0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x1A, 0, 0, 0, 12, 0, 0, 0], .bmp),
    ]

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func refusesWhatOnlyLooksLikeIt() {
        #expect(ImageType(Data([0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 41, 0, 0, 0])) == nil, "a header size no BMP version uses")
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.bmp.name == "BMP")
        #expect(ImageType(filenameExtension: "DIB") == .bmp)
    }
}
