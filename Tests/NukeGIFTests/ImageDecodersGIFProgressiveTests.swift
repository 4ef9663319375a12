import Foundation
import NukeCore
import Testing
@testable import NukeGIF

@Suite("ImageDecoders.GIF progressive")
struct ImageDecodersGIFProgressiveTests {
    /// Feeds `data` in `chunks` to the plugin's incremental decoder as the core drives it (the
    /// registry's, as a session gets it), collecting every event.
    private func feed(_ data: Data, chunks: [Int]) throws -> (previews: [ImageContainer], final: ImageContainer, headers: Int) {
        // The context's data is what the registry sniffs; the bytes themselves go in below.
        var context = ImageDecodingContext(data: data, isCompleted: false)
        context.type = .gif
        var decoder = try #require(ImageDecoderRegistry(codecs: [.gif]).incrementalDecoder(for: context)).decoder
        var previews: [ImageContainer] = []
        var headers = 0
        var offset = 0
        func drain() throws {
            while true {
                switch try decoder.next() {
                case .needsMoreData: return
                case .header: headers += 1
                case .preview(let container): previews.append(container)
                case .final:
                    // Only once the trailer arrived, after every frame's preview.
                    #expect(offset == data.count)
                    return
                }
            }
        }
        for size in chunks where offset < data.count {
            let end = min(offset + size, data.count)
            decoder.push(data[offset..<end])
            offset = end
            try drain()
        }
        decoder.push(data[offset...])
        decoder.finish()
        while true {
            switch try decoder.next() {
            case .final(let container): return (previews, container, headers)
            case .header: headers += 1
            case .preview(let container): previews.append(container)
            case .needsMoreData: Issue.record("needsMoreData after finish")
            }
        }
    }

    static func chunkings(_ count: Int) -> [(String, [Int])] {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<count).map { _ in Int.random(in: 1...97, using: &generator) }
        return [("1-byte", Array(repeating: 1, count: count)), ("random", random), ("whole", [count])]
    }

    @Test("one preview per frame, and a final image equal to a one-shot decode", .enabled(if: gifFixturesExist), arguments: GIFFixture.all)
    func dripFeed(_ fixture: GIFFixture) throws {
        let data = try GIFTestPaths.fixture(fixture.name)
        let oneShot = try ImageDecoders.GIF().decode(data)
        for (label, chunks) in Self.chunkings(data.count) {
            let (previews, final, headers) = try feed(data, chunks: chunks)
            #expect(headers == 1, "\(label)")
            #expect(final.image == oneShot.image, "\(label)")
            #expect(final.animation?.frameCount == oneShot.animation?.frameCount, "\(label)")
            if label != "whole" {
                #expect(previews.count == fixture.frames, "\(label)")
                for (index, preview) in previews.enumerated() {
                    #expect(preview.isPreview)
                    #expect(preview.userInfo[.frameCountKey] as? Int == index + 1)
                    let reference = try GIFTestPaths.reference(fixture.name, frame: index)
                    #expect(preview.image.bitmap.visibleDifferences(from: reference) == 0, "\(label) preview \(index)")
                }
            }
        }
    }

    @Test("the public decoder's partial calls give the previews, then decode gives the final image", .enabled(if: gifFixturesExist))
    func publicDecoder() throws {
        let data = try GIFTestPaths.fixture("dispose-previous.gif")
        let decoder = ImageDecoders.GIF()
        var previews = 0
        for length in Array(stride(from: 1, to: data.count, by: 7)) + [data.count] {
            while let preview = decoder.decodePartiallyDownloadedData(data.prefix(length)) {
                previews += 1
                #expect(preview.userInfo[.scanNumberKey] as? Int == previews)
            }
        }
        let final = try decoder.decode(data)
        #expect(previews == 3)
        #expect(final.image == (try ImageDecoders.GIF().decode(data)).image)
        #expect(final.animation?.frameCount == 3)
    }

    @Test("truncated input after finish throws incomplete", .enabled(if: gifFixturesExist))
    func truncatedFinish() throws {
        let data = try GIFTestPaths.fixture("dispose-none.gif")
        let decoder = GIFIncrementalDecoder(context: ImageDecodingContext(data: Data()))
        decoder.push(data.prefix(data.count / 2))
        decoder.finish()
        let error = try #require(throws: ImageCodecError.self) {
            while true { if case .final = try decoder.next() { break } }
        }
        #expect(error.code == .incomplete)
    }
}
