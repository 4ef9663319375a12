import Foundation
import NukeCore
import NukeXBM
import Testing

/// XBM's identifier, name, extensions and signature are NukeXBM's (issue 42: format knowledge
/// stays in its plugin): linking it is what makes `ImageType(data)` know them.
struct XBMSniffingTests {
    static let signatures: [(String, [UInt8], ImageType)] = [
        ("X11 bitmap", Array("/* icon */\n#define icon_width 16\n#define icon_height 16\n".utf8), .xbm),
    ]

    @Test(arguments: signatures.map { ($0.0, $0.1, $0.2) })
    func sniffsSignature(_ name: String, _ bytes: [UInt8], _ expected: ImageType) {
        #expect(ImageType(Data(bytes)) == expected, "\(name)")
    }

    @Test func refusesWhatOnlyLooksLikeIt() {
        #expect(ImageType(Data(Array("#define NAME value\n".utf8))) == nil, "a define that is not a width")
    }

    @Test func namedAndFoundByExtension() {
        #expect(ImageType.xbm.name == "XBM")
        #expect(ImageType(filenameExtension: "XBM") == .xbm)
    }
}
