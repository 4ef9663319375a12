import Foundation
import NukeConformance
import NukeCore
import NukeNetpbm
import NukePixels
import NukeXBM
import Testing

enum XBMConformance {
    static let plan = ConformancePlan(codec: .xbm, format: "xbm", testFile: #filePath, corpusExtensions: ["xbm"])
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("Fixtures/xbm").appendingPathComponent(name))
    }

    static let registry = ImageDecoderRegistry(codecs: [.xbm])

    static func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = registry.makeContext(for: data)
        configure(&context)
        return try registry.decode(context)
    }
}

@Suite struct XBMTests {
    @Test func manifestLoads() {
        #expect(XBMConformance.plan.manifestError == nil)
        #expect(XBMConformance.plan.manifest.valid.count >= 4)
        #expect(XBMConformance.plan.manifest.invalid.count >= 3)
    }

    @Test(arguments: XBMConformance.plan.cases)
    func conformance(_ check: ConformanceCase) async {
        let result = await XBMConformance.plan.run(check)
        #expect(result.passed, "\(result)")
    }

    @Test(arguments: ["pil.xbm", "hotspot.xbm", "comments-upper.xbm", "x10.xbm"])
    func matchesTheReference(_ name: String) throws {
        let container = try XBMConformance.decode(XBMConformance.data(name))
        #expect(container.image.bitmap.pixelFormat == .gray8)
        let reference = try Netpbm.decode(XBMConformance.data(name.replacingOccurrences(of: ".xbm", with: ".pam")))
        let comparison = ImageComparison(container.image.bitmap, reference: reference, tolerance: .exact)
        #expect(comparison.isMatch, "\(name): \(comparison)")
        #expect(container.userInfo[.xbmIsX10Key] as? Bool == (name == "x10.xbm"))
    }

    /// A set bit is black (X11's foreground), a clear one white; bits least significant first.
    @Test func setBitsAreBlack() throws {
        let data = Data("#define t_width 10\n#define t_height 1\nstatic char t_bits[] = { 0x01, 0x02 };\n".utf8)
        let bitmap = try XBMConformance.decode(data).image.bitmap
        #expect(bitmap.row(0) == [0, 255, 255, 255, 255, 255, 255, 255, 255, 0])
    }

    @Test func reportsTheHotspot() throws {
        let container = try XBMConformance.decode(XBMConformance.data("hotspot.xbm"))
        #expect(container.userInfo[.xbmHotspotXKey] as? Int == 3)
        #expect(container.userInfo[.xbmHotspotYKey] as? Int == 4)
    }

    @Test(arguments: [("bad-truncated.xbm", ImageCodecError.Code.incomplete), ("bad-garbage.xbm", .corrupt), ("bad-no-height.xbm", .corrupt)])
    func badFilesFail(_ name: String, code: ImageCodecError.Code) throws {
        let data = try XBMConformance.data(name)
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoders.XBM(context: ImageDecodingContext(data: data)).decode(data) }
        #expect(error?.code == code)
        #expect(error?.format == .xbm)
    }

    @Test func tooFewValuesAreIncomplete() {
        let data = Data("#define t_width 16\n#define t_height 2\nstatic char t_bits[] = { 0x01, 0x02, 0x03 };\n".utf8)
        let error = #expect(throws: ImageCodecError.self) { try XBMConformance.decode(data) }
        #expect(error?.code == .incomplete)
    }

    @Test func hugeSizesAreRefusedByTheLimits() {
        let data = Data("#define t_width 100000\n#define t_height 100000\nstatic char t_bits[] = { 0x01 };\n".utf8)
        let error = #expect(throws: ImageCodecError.self) { try XBMConformance.decode(data) { $0.limits = .untrusted } }
        #expect(error?.code == .limitExceeded)
    }

    @Test func roundTripsAndThresholds() throws {
        let gray = Bitmap(width: 11, height: 3, pixelFormat: .gray8, bytes: (0..<33).map { $0 % 3 == 0 ? 0 : 255 })
        let data = try ImageEncoders.XBM().encode(Image(bitmap: gray))
        #expect(ImageType(data) == .xbm)
        #expect(try XBMConformance.decode(data).image.bitmap == gray)
        // Dark colours are set bits, light ones and transparent ones clear.
        let rgba = Bitmap(width: 3, height: 1, pixelFormat: .rgba8, bytes: [20, 30, 40, 255, 220, 230, 240, 255, 0, 0, 0, 0])
        #expect(try XBMConformance.decode(ImageEncoders.XBM().encode(Image(bitmap: rgba))).image.bitmap.row(0) == [0, 255, 255])
    }

    @Test func decodesToSize() throws {
        let container = try XBMConformance.decode(XBMConformance.data("pil.xbm")) { $0.targetSize = ImageSize(width: 7, height: 4) }
        #expect(container.image.width <= 11 && container.image.width >= 7)
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 21, height: 13))
    }
}
