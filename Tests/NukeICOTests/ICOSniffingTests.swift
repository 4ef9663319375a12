import Foundation
import NukeCore
import NukeICO
import Testing

/// ICO's identifier, name, extensions and signature are NukeICO's (issue 42: format knowledge
/// stays in its plugin): linking it is what makes `ImageType(data)` know them.
struct ICOSniffingTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("icon", [0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0], .ico),
        ("cursor", [0, 0, 2, 0, 1, 0, 32, 32, 0, 0, 4, 0, 4, 0], .cur),
    ]

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func refusesWhatOnlyLooksLikeIt() {
        #expect(ImageType(Data([0, 0, 1, 0, 0, 0, 16, 16, 0, 0])) == nil, "a directory without entries")
        #expect(ImageType(Data([0, 0, 3, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0])) == nil, "type 3")
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.ico.name == "ICO")
        #expect(ImageType(filenameExtension: "ICO") == .ico)
        #expect(ImageType.cur.name == "CUR")
        #expect(ImageType(filenameExtension: "CUR") == .cur)
    }
}
