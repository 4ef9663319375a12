import Foundation
import NukeCore
import NukePixels
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

    /// giflib's `tests/NAME.rgb` is `gif2rgb`'s output: every image of the file drawn in turn on a
    /// screen filled with the background colour, without disposal. It equals our last composited
    /// frame wherever that frame is opaque (the files below use no disposal), and everywhere for
    /// stills that cover the screen without transparency.
    @Test("giflib's pic/*.gif equal its tests/*.rgb", arguments: [
        ("gifgrid", false), ("porsche", false), ("solid2", false), ("treescap", false),
        ("treescap-interlaced", false), ("x-trans", true), ("welcome2", true), ("fire", true),
    ])
    func giflibReference(_ name: String, opaqueOnly: Bool) throws {
        let gif = GIFTestPaths.giflib.appendingPathComponent("pic/\(name).gif")
        let rgb = GIFTestPaths.giflib.appendingPathComponent("tests/\(name).rgb")
        try #require(FileManager.default.fileExists(atPath: gif.path))
        let container = try ImageDecoders.GIF().decode(try Data(contentsOf: gif))
        var bitmap = container.image.bitmap
        if let animation = container.animation {
            bitmap = try animation.frame(at: animation.frameCount - 1).canvas
        }
        let expected = try [UInt8](Data(contentsOf: rgb))
        let ours = bitmap.packedBytes
        try #require(expected.count == bitmap.width * bitmap.height * 3)
        var differences = 0
        var compared = 0
        for i in 0..<(bitmap.width * bitmap.height) {
            if ours[i * 4 + 3] == 0 {
                if !opaqueOnly { differences += 1 }
                continue
            }
            compared += 1
            if ours[i * 4] != expected[i * 3] || ours[i * 4 + 1] != expected[i * 3 + 1] || ours[i * 4 + 2] != expected[i * 3 + 2] {
                differences += 1
            }
        }
        #expect(compared > 0)
        #expect(differences == 0)
    }
}
