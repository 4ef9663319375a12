import Foundation
import NukeConformance
import NukeCore
import NukeSVG
import Testing

/// The conformance kit run against NukeSVG over Fixtures/svg. (The public corpora's crash tests
/// run isolated, in NukeIsolationTests: some of them crash librsvg.)
enum SVGConformance {
    static let plan = ConformancePlan(codec: .svg, format: "svg", testFile: #filePath, corpusExtensions: [])
}

@Suite struct SVGConformanceTests {
    @Test(arguments: SVGConformance.plan.cases)
    func conformance(_ check: ConformanceCase) async {
        let result = await SVGConformance.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test func manifestHoldsTheFixtures() {
        #expect(SVGConformance.plan.manifestError == nil)
        #expect(SVGConformance.plan.manifest.valid.count >= 10)
    }
}

@Suite struct ImageDecodersSVGTests {
    func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = ImageDecodingContext(data: data)
        configure(&context)
        return try ImageDecoderRegistry.shared.decode(context)
    }

    @Test(arguments: SVGFixture.all)
    func intrinsicSizeAndViewBox(_ fixture: SVGFixture) throws {
        let container = try decode(try SVGTestPaths.fixture(fixture.file))
        #expect(container.type == .svg)
        #expect(container.image.width == fixture.intrinsic[0] && container.image.height == fixture.intrinsic[1])
        #expect(container.userInfo[.svgIntrinsicSizeKey] as? ImageSize == ImageSize(width: fixture.intrinsic[0], height: fixture.intrinsic[1]))
        #expect(container.userInfo[.svgViewBoxKey] as? [Double] == fixture.viewbox)
        #expect(container.image.bitmap.pixelFormat == .rgba8 && container.image.bitmap.alphaMode == .straight)
    }

    /// Rendered at the target size, not rendered small and scaled: equal to rsvg-convert at that size.
    @Test(arguments: SVGFixture.all.filter { $0.second != nil })
    func rendersAtTheTargetSize(_ fixture: SVGFixture) throws {
        let (size, reference) = try #require(fixture.second)
        let container = try decode(try SVGTestPaths.fixture(fixture.file)) {
            $0.targetSize = size
            $0.contentMode = .aspectFit
        }
        #expect(container.image.width == size.width && container.image.height == size.height)
        let comparison = ImageComparison(container.image.bitmap, reference: try SVGTestPaths.reference(reference), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
    }

    @Test func svgzIsSniffedByContent() throws {
        let data = try SVGTestPaths.fixture("shapes.svgz")
        _ = ImageDecoderRegistry.shared   // linking NukeSVG teaches the core SVGZ once the registry loads
        #expect(ImageType(data) == .svg)
        let svgz = try decode(data).image.bitmap
        #expect(svgz == (try decode(try SVGTestPaths.fixture("shapes.svg"))).image.bitmap)
    }

    @Test func dpiResolvesPhysicalUnits() throws {
        let data = try SVGTestPaths.fixture("physical-units.svg")
        let at96 = try decode(data).image
        let at192 = try decode(data) { $0.userInfo[ImageDecoders.SVG.dpiKey] = 192.0 }.image
        #expect(at96.width == 48 && at96.height == 38)
        #expect(at192.width == 96 && at192.height == 76)
    }

    /// A document that asks for a huge canvas fails at the limits before cairo allocates it.
    @Test func renderSizeIsLimited() throws {
        let huge = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>"#.utf8)
        let error = try #require(throws: ImageCodecError.self) { try decode(huge) }
        #expect(error.code == .limitExceeded)
        #expect(error.format == .svg)
        let target = try #require(throws: ImageCodecError.self) {
            try decode(try SVGTestPaths.fixture("shapes.svg")) {
                $0.targetSize = ImageSize(width: 20000, height: 20000)
                $0.limits = .untrusted
            }
        }
        #expect(target.code == .limitExceeded)
    }

    /// A size past what an `Int` holds (a viewBox 5.5 × 10²⁴ tall; found by the svg fuzz target,
    /// which it crashed) is refused by the limits, with or without a target size; one that is not
    /// finite at all is a corrupt header.
    @Test func sizesPastAnyIntegerAreRefused() throws {
        let tall = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="50" viewBox="0 0 100 5555555555555555555555100"><rect width="10" height="10"/></svg>"#.utf8)
        let intrinsic = try #require(throws: ImageCodecError.self) { try decode(tall) }
        #expect(intrinsic.code == .limitExceeded)
        let filled = try #require(throws: ImageCodecError.self) {
            try decode(tall) {
                $0.targetSize = ImageSize(width: 256, height: 256)
                $0.contentMode = .aspectFill
            }
        }
        #expect(filled.code == .limitExceeded)
        let fitted = try decode(tall) {
            $0.targetSize = ImageSize(width: 256, height: 256)
            $0.contentMode = .aspectFit
        }.image
        #expect(fitted.width == 1 && fitted.height == 256)
        // librsvg refuses lengths past a float's range, but a resolution that large makes inches infinite.
        let inches = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="10in" height="10in"/>"#.utf8)
        let error = try #require(throws: ImageCodecError.self) {
            try decode(inches) { $0.userInfo[ImageDecoders.SVG.dpiKey] = Double.greatestFiniteMagnitude }
        }
        #expect(error.code == .corrupt)
        #expect(error.format == .svg)
    }

    /// References to files on disk do not load: the image a file:// href and an absolute path
    /// point at (which exists) is not drawn.
    @Test func referencedFilesAreNotRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("red.png")
        let red = Bitmap(width: 8, height: 8, pixelFormat: .rgba8, bytes: [UInt8](repeating: 0, count: 256).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 })
        try ImageEncoderRegistry.shared.encode(Image(bitmap: red), as: .png).write(to: png)
        try Data("rect { fill: red }".utf8).write(to: directory.appendingPathComponent("style.css"))
        let svg = """
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="32" height="16">
        <style>@import url("file://\(directory.path)/style.css");</style>
        <image href="file://\(png.path)" width="16" height="16"/>
        <image xlink:href="\(png.path)" x="16" width="16" height="16"/>
        <rect x="0" y="0" width="1" height="1" fill="blue"/>
        </svg>
        """
        let bitmap = try decode(Data(svg.utf8)).image.bitmap
        let pixels = bitmap.packedBytes
        // Nothing red anywhere: neither image nor the imported style loaded.
        let reds = stride(from: 0, to: pixels.count, by: 4).filter { pixels[$0] > 200 && pixels[$0 + 1] < 50 && pixels[$0 + 3] > 0 }
        #expect(reds.isEmpty)
        #expect(Array(pixels[0..<4]) == [0, 0, 255, 255], "the rest of the document renders")
    }

    /// Premultiplied on request: cairo's own pixels, reordered; unpremultiplied they match the
    /// straight render within rounding.
    @Test func premultipliedOnRequest() throws {
        let data = try SVGTestPaths.fixture("transforms-opacity.svg")
        let straight = try decode(data).image.bitmap
        let premultiplied = try decode(data) { $0.prefersPremultipliedAlpha = true }.image.bitmap
        #expect(premultiplied.alphaMode == .premultiplied)
        let comparison = ImageComparison(premultiplied, reference: straight, tolerance: .maxDifference(3))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(premultiplied.packedBytes != straight.packedBytes)
    }

    @Test func noEncoderAndNoProgressive() {
        #expect(ImageCodec.svg.makeEncoder == nil)
        #expect(!ImageCodec.svg.info.capabilities.contains(.encode))
        #expect(!ImageCodec.svg.info.capabilities.contains(.progressive))
        #expect(ImageCodec.svg.info.capabilities.contains(.scaledDecode))
    }
}
