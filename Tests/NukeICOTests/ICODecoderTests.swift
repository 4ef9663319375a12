import Foundation
import NukeConformance
import NukeCore
@testable import NukeICO
import NukeNetpbm
import NukePNG
import NukePixels
import Testing

enum ICOTest {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(path))
    }

    static let registry = ImageDecoderRegistry(codecs: [.ico, .cur])

    static func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = registry.makeContext(for: data)
        configure(&context)
        return try registry.decode(context)
    }
}

@Suite struct ICODecoderTests {
    @Test(arguments: ["ico/pil-png.ico", "ico/pil-bmp.ico", "ico/dib-pal8-andmask.ico", "ico/dib-pal1.ico", "ico/dib-24.ico",
                      "ico/dib-32-alpha.ico", "ico/dib-multi.ico", "cur/cursor-32.cur", "cur/cursor-pal1.cur"])
    func matchesTheReference(_ path: String) throws {
        let container = try ICOTest.decode(ICOTest.data(path))
        #expect(container.image.bitmap.pixelFormat == .rgba8)
        let reference = try Netpbm.decode(ICOTest.data(path.replacingOccurrences(of: ".ico", with: ".pam").replacingOccurrences(of: ".cur", with: ".pam")))
        let comparison = ImageComparison(container.image.bitmap, reference: reference, tolerance: .exact)
        #expect(comparison.isMatch, "\(path): \(comparison)")
    }

    @Test func picksTheLargestEntryWithoutATarget() throws {
        let container = try ICOTest.decode(ICOTest.data("ico/dib-multi.ico"))
        #expect(container.userInfo[.icoEntryCountKey] as? Int == 4)
        // Two 24×16 entries: the 32-bit one wins over the 8-bit one.
        #expect(container.userInfo[.icoEntryIndexKey] as? Int == 2)
        #expect(container.userInfo[.icoEntrySizesKey] as? [ImageSize] == [
            ImageSize(width: 8, height: 8), ImageSize(width: 24, height: 16), ImageSize(width: 24, height: 16), ImageSize(width: 16, height: 16),
        ])
    }

    /// The smallest entry at least as large as the target on both sides; the largest when none is.
    @Test(arguments: [
        (ImageSize(width: 8, height: 8), 0, ImageSize(width: 8, height: 8)),
        (ImageSize(width: 6, height: 6), 0, ImageSize(width: 6, height: 6)),
        (ImageSize(width: 12, height: 12), 3, ImageSize(width: 12, height: 12)),
        (ImageSize(width: 20, height: 10), 2, ImageSize(width: 20, height: 13)),
        (ImageSize(width: 100, height: 100), 2, ImageSize(width: 24, height: 16)),
    ])
    func picksTheEntryThatFitsTheTarget(_ target: ImageSize, index: Int, size: ImageSize) throws {
        let container = try ICOTest.decode(ICOTest.data("ico/dib-multi.ico")) { $0.targetSize = target }
        #expect(container.userInfo[.icoEntryIndexKey] as? Int == index)
        #expect(ImageSize(width: container.image.width, height: container.image.height) == size)
    }

    @Test func pngEntriesGoThroughTheRegistry() throws {
        let container = try ICOTest.decode(ICOTest.data("ico/pil-png.ico")) { $0.targetSize = ImageSize(width: 32, height: 32) }
        #expect(container.userInfo[.icoEntryIndexKey] as? Int == 1)
        #expect(container.image.width == 32)
    }

    @Test func pngEntriesWithoutAPNGDecoderAreUnsupported() throws {
        let data = try ICOTest.data("ico/pil-png.ico")
        var decoding = ICODecoding(context: ImageDecodingContext(data: data))
        decoding.pngDecoders = ImageDecoderRegistry()
        let error = #expect(throws: ImageCodecError.self) { try decoding.decode(data) }
        #expect(error?.code == .unsupported)
        #expect(error?.format == .ico)
        #expect(error?.message.contains("NukePNG") == true)
    }

    @Test func cursorsReportTheirHotspot() throws {
        let container = try ICOTest.decode(ICOTest.data("cur/cursor-32.cur"))
        #expect(container.type == .cur)
        #expect(container.userInfo[.cursorHotspotKey] as? CursorHotspot == CursorHotspot(x: 5, y: 7))
        #expect(try ICOTest.decode(ICOTest.data("ico/dib-24.ico")).userInfo[.cursorHotspotKey] == nil)
    }

    @Test func theANDMaskIsAlpha() throws {
        let bitmap = try ICOTest.decode(ICOTest.data("ico/dib-pal8-andmask.ico")).image.bitmap
        // The mask is set where (x + y) % 5 == 0.
        #expect(bitmap.sample(x: 0, y: 0, channel: 3) == 0)
        #expect(bitmap.sample(x: 1, y: 0, channel: 3) == 255)
        #expect(bitmap.sample(x: 4, y: 1, channel: 3) == 0)
    }

    @Test(arguments: [
        ("ico/bad-truncated-entry.ico", ImageCodecError.Code.incomplete),
        ("ico/bad-offset-past-end.ico", .incomplete),
        ("ico/bad-dib-header.ico", .corrupt),
    ])
    func badFilesFail(_ path: String, code: ImageCodecError.Code) throws {
        let data = try ICOTest.data(path)
        let error = #expect(throws: ImageCodecError.self) { try ICODecoding(context: ImageDecodingContext(data: data)).decode(data) }
        #expect(error?.code == code, "\(path): \(String(describing: error))")
        #expect(error?.format == .ico)
    }

    @Test func hugeDIBEntriesAreRefusedByTheLimits() throws {
        var data = try ICOTest.data("ico/dib-32-alpha.ico")
        data.replaceSubrange(26..<34, with: [0x60, 0xEA, 0, 0, 0xC0, 0xD4, 0x01, 0])   // 60000 × 120000 (doubled)
        let error = #expect(throws: ImageCodecError.self) { try ICOTest.decode(data) { $0.limits = .untrusted } }
        #expect(error?.code == .limitExceeded)
        guard case .parsed(let header) = ICOPlugin.parseHeader(data) else {
            Issue.record("no header")
            return
        }
        #expect(header.width == 60_000 && header.height == 60_000)
    }

    @Test func encodesIconsAndCursors() throws {
        let bitmap = try ICOTest.decode(ICOTest.data("ico/dib-32-alpha.ico")).image.bitmap
        let icon = try ImageEncoders.ICO().encode(Image(bitmap: bitmap))
        #expect(ImageType(icon) == .ico)
        #expect(try ICOTest.decode(icon).image.bitmap == bitmap)
        let cursor = try ImageEncoders.ICO(hotspot: CursorHotspot(x: 3, y: 2)).encode(Image(bitmap: bitmap))
        #expect(ImageType(cursor) == .cur)
        let decoded = try ICOTest.decode(cursor)
        #expect(decoded.userInfo[.cursorHotspotKey] as? CursorHotspot == CursorHotspot(x: 3, y: 2))
        #expect(decoded.image.bitmap == bitmap)
        // 256 pixels a side: a PNG entry through NukePNG's encoder.
        let big = Bitmap(width: 256, height: 256, pixelFormat: .rgba8, bytes: (0..<(256 * 256 * 4)).map { UInt8($0 % 251) })
        let png = try ImageEncoders.ICO().encode(Image(bitmap: big))
        #expect(png[22..<30] == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(try ICOTest.decode(png).image.bitmap == big)
        #expect(throws: ImageCodecError.self) { try ImageEncoders.ICO().encode(Image(bitmap: Bitmap(width: 257, height: 1, pixelFormat: .rgb8, bytes: [UInt8](repeating: 0, count: 771)))) }
    }
}

/// Inputs the fuzzer found (Fixtures/regressions/ico): each decodes or fails with `ImageCodecError`.
@Suite struct ICORegressionTests {
    @Test func pngEntriesClaimingHugeSizesDoNotOverflow() throws {
        let data = try ICOTest.data("regressions/ico/png-entry-of-4g-by-4g-overflowing-the-area.ico")
        #expect(throws: ImageCodecError.self) { try ICODecoding(context: ImageDecodingContext(data: data)).decode(data) }
        _ = ICOPlugin.parseHeader(data)
        for target in [ImageSize(width: 16, height: 16), ImageSize(width: 1_000_000, height: 1_000_000)] {
            _ = try? ICODecoding(context: ImageDecodingContext(data: data, targetSize: target)).decode(data)
        }
    }
}
