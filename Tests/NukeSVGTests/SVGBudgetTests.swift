import Foundation
import NukeCore
import NukeSVG
import Testing

/// What a render costs is bounded by the limits before librsvg draws anything, in process as in
/// a helper: documents made to stall or exhaust librsvg 2.54 end at once in `.limitExceeded`
/// (or `.corrupt` for a reference cycle), and ordinary documents render as before.
@Suite struct SVGBudgetTests {
    static func decode(_ svg: String, limits: ImageLimits = .untrusted, size: ImageSize? = nil) throws -> ImageContainer {
        try decode(Data(svg.utf8), limits: limits, size: size)
    }

    static func decode(_ data: Data, limits: ImageLimits = .untrusted, size: ImageSize? = nil) throws -> ImageContainer {
        try ImageDecoderRegistry.shared.decode(ImageDecodingContext(data: data, targetSize: size, limits: limits))
    }

    static func expectRefused(_ svg: String, _ words: String, code: ImageCodecError.Code = .limitExceeded, limits: ImageLimits = .untrusted,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: ImageCodecError.self, sourceLocation: sourceLocation) { try decode(svg, limits: limits) }
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.format == .svg, sourceLocation: sourceLocation)
        #expect(error?.message.contains(words) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// librsvg's bug 1062: a turbulence of 33 billion octaves on a tiny path ran for minutes.
    @Test func turbulenceOctavesAreWork() {
        let svg = ##"<svg xmlns="http://www.w3.org/2000/svg"><filter id="a"><feTurbulence numOctaves="33333333333"/></filter><path d="m10 10 H1 V1" filter="url(#a)"/></svg>"##
        Self.expectRefused(svg, "operations of about a nanosecond")
        Self.expectRefused(svg, "operations of about a nanosecond", limits: .default)
    }

    /// A few octaves over a thumbnail are fine.
    @Test func anOrdinaryFilterRenders() throws {
        let svg = ##"<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><filter id="a"><feTurbulence numOctaves="4"/><feGaussianBlur stdDeviation="2"/></filter><rect width="64" height="64" filter="url(#a)"/></svg>"##
        #expect(try Self.decode(svg).image.width == 64)
    }

    /// Ten levels of ten `use`s of the level below: 10^10 elements from a kilobyte.
    @Test func referencesAreCountedWhereverTheyAreUsed() {
        var defs = #"<g id="l0"><rect width="1" height="1"/></g>"#
        for level in 1...10 {
            defs += "<g id=\"l\(level)\">" + String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10) + "</g>"
        }
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><defs>\(defs)</defs><use href=\"#l10\"/></svg>"
        Self.expectRefused(svg, "elements once its references are expanded")
    }

    /// A stylesheet's `url(#…)` may apply to every element.
    @Test func stylesheetFiltersApplyToEveryElement() {
        let rects = String(repeating: #"<rect width="4" height="4"/>"#, count: 200)
        let svg = ##"<svg xmlns="http://www.w3.org/2000/svg" width="4096" height="4096"><style>rect { filter: url(#m) }</style><filter id="m"><feMorphology radius="40"/></filter>"## + rects + "</svg>"
        Self.expectRefused(svg, "operations of about a nanosecond")
    }

    @Test func referenceCyclesAreCorrupt() {
        let svg = ##"<svg xmlns="http://www.w3.org/2000/svg"><g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g></svg>"##
        Self.expectRefused(svg, "cycle", code: .corrupt, limits: .default)
    }

    /// gdk-pixbuf decodes an embedded image at whatever size it declares.
    @Test func embeddedImagesAreCheckedByTheirHeaders() throws {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        png += Data([0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0])  // 100,000 × 100,000
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"><image width=\"8\" height=\"8\" href=\"data:image/png;base64,\(png.base64EncodedString())\"/></svg>"
        Self.expectRefused(svg, "exceeds the maximum dimension", limits: .default)
        let gif = "<svg xmlns=\"http://www.w3.org/2000/svg\"><image href=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\"/></svg>"
        Self.expectRefused(gif, "only PNG, JPEG and SVG", limits: .default)
        // A small embedded PNG draws.
        let tiny = try ImageEncoderRegistry.shared.encode(Image(bitmap: Bitmap(width: 2, height: 2, pixelFormat: .rgba8, bytes: [UInt8](repeating: 255, count: 16))), as: .png)
        let ok = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"><image width=\"8\" height=\"8\" href=\"data:image/png;base64,\(tiny.base64EncodedString())\"/></svg>"
        #expect(try Self.decode(ok).image.width == 8)
    }

    /// Issue 42: refused from strangers (the untrusted limits), drawn otherwise (the SVG 1.1
    /// suite's documents use such entities; libxml2 bounds their expansion).
    @Test func entitiesThatExpandToMarkupAreRefusedOnlyFromStrangers() throws {
        let svg = ##"<!DOCTYPE svg [<!ENTITY u "<rect width='4' height='4'/>">]><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">&u;</svg>"##
        Self.expectRefused(svg, "expands to markup", limits: .untrusted)
        let image = try Self.decode(svg, limits: .default).image
        #expect(image.width == 4)
        // The entity's rectangle is drawn: opaque black, where an empty document is transparent.
        let bitmap = image.bitmap
        #expect(bitmap.withUnsafeBytes { $0[3] } == 255)
    }

    /// Surfaces alive at once: a filter of many primitives over a large render.
    @Test func workingMemoryIsBoundedByDecodedBytes() {
        let primitives = String(repeating: #"<feOffset dx="1"/>"#, count: 40)
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="2048"><filter id="f">"# + primitives + ##"</filter><rect width="10" height="10" filter="url(#f)"/></svg>"##
        Self.expectRefused(svg, "surfaces")
    }

    /// An SVGZ is measured after it is decompressed, and decompresses only so far.
    @Test func svgzIsMeasuredDecompressed() throws {
        let markup = Data("<svg xmlns=\"http://www.w3.org/2000/svg\">".utf8) + Data(String(repeating: " ", count: 80 << 20).utf8) + Data("</svg>".utf8)
        let compressed = try #require(SVGBudgetTests.gzip(markup))
        let error = #expect(throws: ImageCodecError.self) { try Self.decode(compressed) }
        #expect(error?.code == .limitExceeded && error?.message.contains("decompresses to more than") == true, "\(String(describing: error))")
    }

    /// `gzip -c`, through the system's gzip.
    static func gzip(_ data: Data) -> Data? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        guard (try? process.run()) != nil else { return nil }
        let writer = Thread { input.fileHandleForWriting.write(data); try? input.fileHandleForWriting.close() }
        writer.start()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? result : nil
    }
}
