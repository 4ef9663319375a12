import Foundation
import NukeCore
import NukeProcessing
import Testing
@testable import ThumbnailServer

@Suite struct ThumbnailRequestTests {
    @Test func parsesProcessingOptions() throws {
        #expect(try ThumbnailRequest(processing: "fill:300:200,q:75") == ThumbnailRequest(mode: .fill, width: 300, height: 200, quality: 75))
        #expect(try ThumbnailRequest(processing: "s:128,f:jpeg") == ThumbnailRequest(mode: .fit, width: 128, height: 128, format: .jpeg))
        #expect(try ThumbnailRequest(processing: "fit:640:480") == ThumbnailRequest(width: 640, height: 480))
        #expect(try ThumbnailRequest(processing: "fill:64:64,g:sm,a:1") == ThumbnailRequest(mode: .fill, width: 64, height: 64, gravity: .entropy, keepsAnimation: true))
        #expect(try ThumbnailRequest(processing: "fill:64:64,g:we") == ThumbnailRequest(mode: .fill, width: 64, height: 64, gravity: .left))
        var progressive = ThumbnailRequest(format: .jpeg)
        progressive.progressiveJPEG = true
        #expect(try ThumbnailRequest(processing: "f:jpeg,pj:1") == progressive)
    }

    /// JPEG thumbnails have optimal Huffman tables (smaller than libjpeg's default tables, same
    /// pixels) and are progressive with `pj:1`.
    @Test func jpegIsOptimisedAndProgressiveWhenAsked() throws {
        let bitmap = Bitmap(width: 300, height: 200, pixelFormat: .rgb8, bytes: (0..<300 * 200).flatMap { index -> [UInt8] in
            let x = index % 300, y = index / 300
            return [UInt8(x * 255 / 299), UInt8(y * 255 / 199), UInt8((x * y) % 256)]
        })
        let container = ImageContainer(image: Image(bitmap: bitmap))
        let baseline = try Thumbnailer.encoded(container, .init(request: ThumbnailRequest(format: .jpeg), format: .jpeg, quality: 80))
        let progressive = try Thumbnailer.encoded(container, .init(request: try ThumbnailRequest(processing: "f:jpeg,pj:1"), format: .jpeg, quality: 80))
        #expect(ImageHeader(baseline)?.isProgressive == false && ImageHeader(progressive)?.isProgressive == true)
        let unoptimised = try ImageEncoderRegistry.shared.encode(container.image, as: .jpeg, options: ImageEncodingOptions(quality: 0.8, metadata: .display))
        #expect(baseline.count < unoptimised.count)
        let decoded = try ImageDecoderRegistry.shared.decode(baseline).image.bitmap
        #expect(decoded == (try ImageDecoderRegistry.shared.decode(unoptimised).image.bitmap))
    }

    @Test(arguments: ["fill:300", "fit:0:10", "s:4096", "q:0", "q:101", "f:gif", "s:64,fit:64:64", "blur:3", "", "s:64,", "g:center", "g:ce,g:no", "a:2", "a:", "pj:2", "pj:1,pj:0"])
    func refusesBadOptions(_ processing: String) {
        #expect(throws: ThumbnailRequest.Invalid.self) { try ThumbnailRequest(processing: Substring(processing)) }
    }

    @Test func sourcesAreLocalNamesOrHTTPURLs() throws {
        #expect(try ImageSource(encoded: Substring(encodeSource("local:///a/b.jpg"))) == .local("a/b.jpg"))
        #expect(try ImageSource(encoded: "plain/https%3A%2F%2Fexample.com%2Fa.jpg") == .remote(try #require(URL(string: "https://example.com/a.jpg"))))
        for bad in ["local:///../etc/passwd", "local:///a/../../b", "local:////etc/passwd", "file:///etc/passwd", "ftp://example.com/a",
                    "http://user:pass@example.com/a", "gopher://x"] {
            #expect(throws: ImageSource.Invalid.self) { try ImageSource(encoded: Substring(encodeSource(bad))) }
        }
    }

    /// A fill keeps the part of the image its gravity names: a horizontal red gradient filled to
    /// a square keeps its middle, its left end (`g:we`) or its right end (`g:ea`).
    @Test(arguments: [("ce", 110...145), ("we", 0...40), ("ea", 215...255)])
    func fillKeepsWhatItsGravityNames(_ gravity: String, _ expected: ClosedRange<UInt8>) throws {
        let bitmap = Bitmap(width: 400, height: 100, pixelFormat: .rgba8, bytes: (0..<400 * 100).flatMap { index -> [UInt8] in
            let x = index % 400
            return [UInt8(x * 255 / 399), 0, 0, 255]
        })
        let request = try ThumbnailRequest(processing: Substring("fill:50:50,g:\(gravity)"))
        let filled = try ImageProcessors.Composition(Thumbnailer.processors(for: request)).process(bitmap)
        #expect(filled.width == 50 && filled.height == 50)
        let red = filled.withUnsafeRow(25) { $0[25 * 4] }
        #expect(expected.contains(red), "\(gravity): \(red)")
    }
}
