import Foundation
import NukeCore
import Testing
@testable import NukeGIF

@Suite("ImageDecoders.GIF on public corpora", .enabled(if: gifCorporaExist))
struct ImageDecodersGIFCorporaTests {
    @Test("every corpus GIF decodes, frames included, or fails with a clear GIF error", arguments: GIFTestPaths.corpusFiles())
    func corpus(_ path: String) throws {
        let data = try Data(contentsOf: GIFTestPaths.corpora.appendingPathComponent(path))
        do {
            let container = try ImageDecoders.GIF().decode(data)
            #expect(container.image.width > 0)
            if let animation = container.animation {
                let frames = try animation.makeIterator(memoryBudget: 256 << 20)
                var count = 0
                while let frame = try frames.next() {
                    #expect(frame.canvas.width == animation.canvasSize.width)
                    count += 1
                }
                #expect(count == animation.frameCount)
            }
        } catch let error as ImageCodecError {
            #expect(error.format == .gif, "\(path): \(error)")
            #expect(!error.message.isEmpty)
        }
    }

    /// giflib's own stills whose only image covers the screen without transparency: gif2rgb's
    /// output (tests/NAME.rgb, RGB triplets) must equal ours.
    @Test("giflib's pic/*.gif equal its tests/*.rgb", arguments: ["gifgrid", "porsche", "solid2", "treescap", "treescap-interlaced"])
    func giflibReference(_ name: String) throws {
        let gif = GIFTestPaths.giflib.appendingPathComponent("pic/\(name).gif")
        let rgb = GIFTestPaths.giflib.appendingPathComponent("tests/\(name).rgb")
        try #require(FileManager.default.fileExists(atPath: gif.path))
        let bitmap = try ImageDecoders.GIF().decode(try Data(contentsOf: gif)).image.bitmap
        let expected = try [UInt8](Data(contentsOf: rgb))
        let ours = bitmap.packedBytes
        #expect(expected.count == bitmap.width * bitmap.height * 3)
        var differences = 0
        for i in 0..<(bitmap.width * bitmap.height) where i * 3 + 2 < expected.count {
            if ours[i * 4] != expected[i * 3] || ours[i * 4 + 1] != expected[i * 3 + 1] || ours[i * 4 + 2] != expected[i * 3 + 2] || ours[i * 4 + 3] != 255 {
                differences += 1
            }
        }
        #expect(differences == 0)
    }
}
