import Foundation
import NukeCore
import NukeSVG
import Synchronization
import Testing

/// NukeSVG's header hook: the intrinsic size librsvg gives the document, read from the root
/// element before any decoder exists, and the core's gate holding the render size to the limits.
@Suite struct SVGHeaderTests {
    /// Decodes counted by ``OnePixel``.
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
    }

    /// A decoder that takes anything and counts its calls.
    struct OnePixel: ImageDecoding {
        let calls: Calls

        func decode(_ data: Data) throws -> ImageContainer {
            calls.count.add(1, ordering: .relaxed)
            return ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .rgba8, bytes: [0, 0, 0, 0])), type: .svg)
        }
    }

    func header(_ markup: String) -> ImageHeader.ParseResult {
        SVGPlugin.parseHeader(Data(markup.utf8))
    }

    func size(_ markup: String) -> ImageSize? {
        guard case .parsed(let header) = header(markup) else { return nil }
        #expect(header.type == .svg && header.isScalable)
        return header.size
    }

    /// The size agrees with the decoder's (librsvg's) on every valid fixture.
    @Test(arguments: SVGFixture.all)
    func agreesWithTheDecoderOnTheFixtures(_ fixture: SVGFixture) throws {
        let result = SVGPlugin.parseHeader(try SVGTestPaths.fixture(fixture.file))
        guard case .parsed(let header) = result else {
            Issue.record("\(fixture.file): \(result)")
            return
        }
        #expect(header.size == ImageSize(width: fixture.intrinsic[0], height: fixture.intrinsic[1]))
    }

    /// Wherever the hook answers on librsvg's own reference tests, it answers what librsvg does.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: Self.corpus.path)))
    func agreesWithTheDecoderOnLibrsvgsReferenceTests() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "svg" }
        var parsed = 0
        for file in files {
            let data = try Data(contentsOf: file)
            guard case .parsed(let header) = SVGPlugin.parseHeader(data),
                  let decoded = try? ImageDecoderRegistry.shared.decode(data) else { continue }
            parsed += 1
            #expect(decoded.userInfo[.svgIntrinsicSizeKey] as? ImageSize == header.size, "\(file.lastPathComponent)")
        }
        #expect(parsed >= files.count / 2, "\(parsed) of \(files.count) read")
    }

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../../shared/corpora/svg/GNOME_librsvg/rsvg/tests/fixtures/reftests/bugs").standardizedFileURL

    @Test func unitsAtNinetySixDPI() {
        #expect(size(#"<svg width="2in" height="1.5cm"/>"#) == ImageSize(width: 192, height: 57))
        #expect(size(#"<svg xmlns="http://www.w3.org/2000/svg" width=" 10.2px " height='72pt'>"#) == ImageSize(width: 11, height: 96))
        #expect(size(#"<svg width="1e2" height="3pc"></svg>"#) == ImageSize(width: 100, height: 48))
    }

    @Test func viewBoxWhenTheSizeIsRelativeOrMissing() {
        #expect(size(#"<svg width="100%" height="50" viewBox="0 0 40,30"/>"#) == ImageSize(width: 40, height: 30))
        #expect(size(#"<svg viewBox="-5 -5 640 480">"#) == ImageSize(width: 640, height: 480))
        #expect(size(#"<?xml version="1.0"?><!-- c --><!DOCTYPE svg [<!ENTITY a "b">]><svg:svg xmlns:svg="http://www.w3.org/2000/svg">"#)
            == ImageSize(width: 300, height: 150))
    }

    @Test func whatOnlyAFullParseKnowsIsUnavailable() {
        #expect(header(#"<svg width="10em" height="10"/>"#) == .unavailable)
        #expect(header(#"<!DOCTYPE svg [<!ENTITY w "9999">]><svg width="&w;" height="10"/>"#) == .unavailable)
        #expect(header(#"<svg width=10 height=10/>"#) == .unavailable)
    }

    @Test func aRootTagCutShortNeedsMoreData() {
        #expect(header(#"<?xml version="1.0"?>"#) == .needsMoreData)
        #expect(header(#"<svg width="10" hei"#) == .needsMoreData)
        #expect(header(#"<svg width="10" height="20"/>"#) != .needsMoreData)
    }

    /// A catch-all decoder registered for SVG never sees a document whose render would be over
    /// the limits: the core's gate refuses it from the header; at a small target it renders.
    @Test func theGateHoldsTheRenderSizeToTheLimits() throws {
        let registry = ImageDecoderRegistry()
        registry.register(.svg)
        let calls = Calls()
        registry.register(for: .svg, priority: 100, name: "catch-all") { _ in OnePixel(calls: calls) }
        let huge = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="5" height="5"/></svg>"#.utf8)
        let refused = #expect(throws: ImageCodecError.self) { try registry.decode(ImageDecodingContext(data: huge)) }
        #expect(refused?.code == .limitExceeded)
        #expect(calls.count.load(ordering: .relaxed) == 0)
        var small = ImageDecodingContext(data: huge)
        small.targetSize = ImageSize(width: 64, height: 64)
        _ = try registry.decode(small)
        #expect(calls.count.load(ordering: .relaxed) == 1)
        // Enlarged past the limits by the target: refused too.
        var enlarged = ImageDecodingContext(data: Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#.utf8))
        enlarged.targetSize = ImageSize(width: 40_000, height: 40_000)
        let enlargedRefused = #expect(throws: ImageCodecError.self) { try registry.decode(enlarged) }
        #expect(enlargedRefused?.code == .limitExceeded)
        #expect(calls.count.load(ordering: .relaxed) == 1)
    }
}
