import Foundation
import NukeCore
@testable import NukePNG
import Testing

/// Warnings reach the container, and a strict decode refuses what libpng only warned about.
@Suite struct StrictDecodingPNGTests {
    /// A PNG whose tEXt chunk has a bad CRC: libpng warns and decodes the image.
    func pngWithBadAncillaryCRC() throws -> Data {
        let bitmap = PNGTestImages.gradient(width: 16, height: 16, format: .rgb8)
        let data = try ImageEncoders.PNG().encode(Image(bitmap: bitmap))
        var editor = try #require(PNGTestChunkEditor(data))
        editor.chunks.insert(.init(type: "tEXt", data: Array("Comment\0hello".utf8)), at: 1)
        editor.chunks[1].crc = 0x1234_5678
        return editor.data
    }

    func decode(_ data: Data, strict: Bool) throws -> ImageContainer {
        try ImageDecoderRegistry(codecs: [.png]).decode(ImageDecodingContext(data: data, isStrict: strict))
    }

    @Test func warningsAreReported() throws {
        let container = try decode(try pngWithBadAncillaryCRC(), strict: false)
        let warnings = try #require(container.userInfo[.warningsKey] as? ImageDecodingWarnings)
        #expect(warnings.count == 1)
        #expect(!warnings.first.isEmpty)
    }

    @Test func strictDecodeRefusesWarnings() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(try pngWithBadAncillaryCRC(), strict: true) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("strict"))
    }

    @Test func cleanFileDecodesStrictly() throws {
        let data = try ImageEncoders.PNG().encode(Image(bitmap: PNGTestImages.gradient(width: 16, height: 16, format: .rgb8)))
        let container = try decode(data, strict: true)
        #expect(container.userInfo[.warningsKey] == nil)
    }
}
