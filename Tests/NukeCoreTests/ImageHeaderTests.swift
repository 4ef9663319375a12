import Foundation
import Testing
@testable import NukeCore

/// Fixtures and corpora for header tests, found relative to this file.
enum HeaderFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let corpora = root.deletingLastPathComponent().appendingPathComponent("shared/corpora")
    static let corporaExist = FileManager.default.fileExists(atPath: corpora.path)

    struct PNGFixture: Sendable, CustomTestStringConvertible {
        var file: String
        var width: Int
        var height: Int
        var interlaced: Bool
        var testDescription: String { file }
    }

    /// The valid PNG fixtures of Fixtures/png/manifest.json.
    static let pngFixtures: [PNGFixture] = {
        let url = root.appendingPathComponent("Fixtures/png/manifest.json")
        guard let data = try? Data(contentsOf: url),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let fixtures = json["fixtures"] as? [[String: Any]] else { return [] }
        return fixtures.compactMap { entry in
            guard entry["kind"] as? String == "valid", let file = entry["file"] as? String,
                  let width = entry["width"] as? Int, let height = entry["height"] as? Int else { return nil }
            return PNGFixture(file: file, width: width, height: height, interlaced: entry["interlaced"] as? Bool ?? false)
        }
    }()

    static func corpus(_ path: String) throws -> Data {
        try Data(contentsOf: corpora.appendingPathComponent(path))
    }
}

/// A JPEG prefix: SOI, an APP1 EXIF segment of `exifPadding` extra bytes with orientation 6,
/// a COM segment, fill bytes, then SOF (0xC0 or 0xC2) for `width`×`height` with 3 components.
private func makeJPEGHeader(width: Int, height: Int, sof: UInt8 = 0xC0, exifPadding: Int = 0) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8]
    // EXIF: "Exif\0\0" + big-endian TIFF header + IFD0 with one entry: Orientation = 6.
    var exif: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1,
                                               0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
    exif += [UInt8](repeating: 0xAA, count: exifPadding)
    // A segment's length is 16 bits: split a large block over several APP1 segments.
    let first = Array(exif.prefix(65_533))
    bytes += [0xFF, 0xE1, UInt8((first.count + 2) >> 8), UInt8((first.count + 2) & 0xFF)] + first
    var rest = Array(exif.dropFirst(65_533))
    while !rest.isEmpty {
        let part = Array(rest.prefix(65_533))
        rest = Array(rest.dropFirst(65_533))
        bytes += [0xFF, 0xE2, UInt8((part.count + 2) >> 8), UInt8((part.count + 2) & 0xFF)] + part
    }
    bytes += [0xFF, 0xFE, 0x00, 0x05] + Array("hi!".utf8)
    bytes += [0xFF, 0xFF, 0xFF]  // fill bytes before the next marker
    bytes += [sof, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 0x03,
              1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    bytes += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3F, 0]
    return bytes
}

@Suite struct ImageHeaderTests {
    @Test func jpegBaselineBehindLargeEXIF() throws {
        let bytes = makeJPEGHeader(width: 4_000, height: 3_000, exifPadding: 100_000)
        let header = try #require(ImageHeader(Data(bytes)))
        #expect(header.type == .jpeg)
        #expect(header.size == ImageSize(width: 4_000, height: 3_000))
        #expect(header.bitDepth == 8)
        #expect(header.componentCount == 3)
        #expect(header.isProgressive == false)
        #expect(header.orientation == .right)
    }

    @Test func jpegProgressive() throws {
        let header = try #require(ImageHeader(Data(makeJPEGHeader(width: 450, height: 300, sof: 0xC2))))
        #expect(header.isProgressive)
        #expect(header.size == ImageSize(width: 450, height: 300))
    }

    @Test func jpegEveryPrefixNeedsMoreData() {
        let bytes = makeJPEGHeader(width: 64, height: 48, exifPadding: 300)
        let sofEnd = bytes.count - 14 - 9  // neither the SOS segment nor SOF's component table is needed
        for length in 0..<sofEnd {
            #expect(ImageHeader.parse(Data(bytes.prefix(length))) == .needsMoreData, "prefix \(length)")
        }
        #expect(ImageHeader(Data(bytes.prefix(sofEnd)))?.width == 64)
    }

    @Test func jpegSOSBeforeFrameIsUnavailable() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(ImageHeader.parse(Data(bytes)) == .unavailable)
    }

    @Test func jpegGarbageAfterSOIIsUnavailable() {
        #expect(ImageHeader.parse(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0x12, 0x34, 0, 0, 0, 0])) == .unavailable)
        #expect(ImageHeader.parse(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x12, 0x34, 0x56, 0, 0, 0])) == .unavailable)
    }

    @Test func jpegScanCountOfSynthetic() {
        var bytes = makeJPEGHeader(width: 8, height: 8, sof: 0xC2)
        bytes += [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD3, 0x56]  // entropy data with a stuffed byte and a restart
        bytes += [0xFF, 0xDA, 0x00, 0x08, 0x01, 1, 0, 0, 0, 0, 0x77]
        bytes += [0xFF, 0xD9]
        #expect(ImageHeader.jpegScanCount(in: Data(bytes)) == 2)
        #expect(ImageHeader.jpegScanCount(in: Data([0x89, 0x50])) == nil)
    }

    @Test(.enabled(if: HeaderFixtures.corporaExist))
    func jpegCorpora() throws {
        let progressive = try HeaderFixtures.corpus("jpeg/kean_Nuke/Tests/Resources/progressive.jpeg")
        let header450 = try #require(ImageHeader(progressive))
        #expect(header450.size == ImageSize(width: 450, height: 300))
        #expect(header450.isProgressive)
        #expect(header450.bitDepth == 8)
        #expect(header450.componentCount == 3)
        #expect(ImageHeader.jpegScanCount(in: progressive) == 10)
        // SOF2 at byte 7394, behind EXIF.
        let tricky = try HeaderFixtures.corpus("jpeg/kean_Nuke/Tests/Resources/tricky_progressive.jpeg")
        #expect(ImageHeader.parse(tricky.prefix(7_000)) == .needsMoreData)
        let header = try #require(ImageHeader(tricky))
        #expect(header.isProgressive)
        #expect(ImageHeader.jpegScanCount(in: tricky) == 10)
        let baseline = try HeaderFixtures.corpus("jpeg/libjpeg-turbo_libjpeg-turbo/testimages/testorig.jpg")
        #expect(ImageHeader(baseline)?.size == ImageSize(width: 227, height: 149))
        #expect(ImageHeader.jpegScanCount(in: baseline) == 1)
    }

    @Test(arguments: HeaderFixtures.pngFixtures)
    func pngFixture(_ fixture: HeaderFixtures.PNGFixture) throws {
        let data = try Data(contentsOf: HeaderFixtures.root.appendingPathComponent("Fixtures/png/\(fixture.file)"))
        let header = try #require(ImageHeader(data))
        #expect(header.type == .png)
        #expect(header.size == ImageSize(width: fixture.width, height: fixture.height))
        #expect(header.isProgressive == fixture.interlaced)
        #expect(ImageHeader.parse(data.prefix(32)) == .needsMoreData)
    }

    @Test func pngAnimationAndAlpha() throws {
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let n = payload.count
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8) + payload + [0, 0, 0, 0]
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = chunk("IHDR", [0, 0, 1, 0, 0, 0, 0, 200, 8, 6, 0, 0, 1])
        let apng = signature + ihdr + chunk("acTL", [0, 0, 0, 12, 0, 0, 0, 0]) + chunk("IDAT", [1, 2, 3])
        let header = try #require(ImageHeader(Data(apng)))
        #expect(header.size == ImageSize(width: 256, height: 200))
        #expect(header.frameCount == 12)
        #expect(header.isAnimated)
        #expect(header.hasAlpha == true)
        #expect(header.isProgressive)
        #expect(header.componentCount == 4)
        // IHDR alone: the size is known, the frame count not yet.
        #expect(ImageHeader(Data(signature + ihdr))?.frameCount == nil)
    }

    @Test func pngZeroWidthIsUnavailable() throws {
        let data = try Data(contentsOf: HeaderFixtures.root.appendingPathComponent("Fixtures/png/ihdr-zero-width.png"))
        #expect(ImageHeader.parse(data) == .unavailable)
    }

    @Test func gifLogicalScreen() throws {
        let bytes: [UInt8] = Array("GIF89a".utf8) + [0x2C, 0x01, 0xC8, 0x00, 0xF7, 0, 0]
        let header = try #require(ImageHeader(Data(bytes)))
        #expect(header.type == .gif)
        #expect(header.size == ImageSize(width: 300, height: 200))
        #expect(ImageHeader.parse(Data(bytes.prefix(9))) == .needsMoreData)
    }

    @Test func webpVariants() throws {
        func riff(_ chunk: String, _ payload: [UInt8]) -> Data {
            Data(Array("RIFF".utf8) + [0x40, 0, 0, 0] + Array("WEBP".utf8) + Array(chunk.utf8) + [UInt8(payload.count), 0, 0, 0] + payload)
        }
        // VP8: frame tag, start code, 14-bit sizes (scale bits set on purpose).
        let lossy = riff("VP8 ", [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x90, 0x41, 0x2C, 0x01, 0, 0])
        #expect(ImageHeader(lossy) == ImageHeader(type: .webp, width: 400, height: 300, bitDepth: 8, componentCount: 3,
                                                  hasAlpha: false, frameCount: 1))
        // VP8L: 0x2F, then width-1 (14 bits), height-1 (14 bits), alpha (1 bit).
        let bits = (640 - 1) | (480 - 1) << 14 | 1 << 28
        let lossless = riff("VP8L", [0x2F, UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24 & 0xFF), 0, 0, 0, 0, 0])
        #expect(ImageHeader(lossless)?.size == ImageSize(width: 640, height: 480))
        #expect(ImageHeader(lossless)?.hasAlpha == true)
        // VP8X: flags (animation + alpha), reserved, canvas width-1 and height-1 (24 bits each).
        let extended = riff("VP8X", [0x12, 0, 0, 0, 0x1F, 0x4E, 0x00, 0x0F, 0x27, 0x00])
        let header = try #require(ImageHeader(extended))
        #expect(header.size == ImageSize(width: 20_000, height: 10_000))
        #expect(header.isAnimated)
        #expect(header.hasAlpha == true)
        #expect(ImageHeader.parse(extended.prefix(25)) == .needsMoreData)
    }

    /// Sizes as ImageMagick's `identify` reports them.
    @Test(.enabled(if: HeaderFixtures.corporaExist), arguments: [
        ("webp/SDWebImage_SDWebImageWebPCoder/Tests/Images/TestImageStatic.webp", 550, 368, false),
        ("webp/SDWebImage_SDWebImageWebPCoder/Tests/Images/TestImageAnimated.webp", 990, 1050, true),
        ("webp/image-rs_image/tests/images/webp/lossless_images/simple.webp", 300, 300, false),
        ("webp/image-rs_image/tests/images/webp/extended_images/lossy_alpha.webp", 100, 100, false),
        ("heif/kean_Nuke/Tests/Resources/img_751.heic", 1008, 756, false),
        ("heif/SDWebImage_SDWebImage/Tests/Tests/Images/TestImage.heic", 1440, 960, false),
        ("gif/giflib-5.2.1_debian-source/pic/porsche.gif", 320, 200, false),
    ])
    func corpora(_ path: String, _ width: Int, _ height: Int, _ animated: Bool) throws {
        let header = try #require(ImageHeader(try HeaderFixtures.corpus(path)))
        #expect(header.size == ImageSize(width: width, height: height))
        #expect(header.isAnimated == animated)
    }

    @Test func isoBMFFTruncatedNeedsMoreData() throws {
        // ftyp only: the meta box has not arrived.
        let ftyp: [UInt8] = [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        #expect(ImageHeader.parse(Data(ftyp)) == .needsMoreData)
        #expect(ImageHeader.parse(Data(ftyp + [0, 0, 0, 0x40] + Array("meta".utf8))) == .needsMoreData)
    }

    /// A box: 32-bit size, type, payload.
    static func box(_ type: String, _ payload: [UInt8], size: UInt32? = nil) -> [UInt8] {
        let length = size ?? UInt32(8 + payload.count)
        return withUnsafeBytes(of: length.bigEndian, Array.init) + Array(type.utf8) + payload
    }

    static func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        box("ispe", [0, 0, 0, 0] + withUnsafeBytes(of: width.bigEndian, Array.init) + withUnsafeBytes(of: height.bigEndian, Array.init))
    }

    static let heicFtyp: [UInt8] = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))

    @Test func isoBMFFHugeSizesWithoutPrimaryItemDoNotOverflow() {
        // No pitm/ipma: the largest ispe is chosen, and 0xFFFFFFFF² does not fit in Int.
        let ipco = Self.box("ipco", Self.ispe(0xFFFF_FFFF, 0xFFFF_FFFF) + Self.ispe(0xFFFF_FFFF, 0xFFFF_FFFE))
        let meta = Self.box("meta", [0, 0, 0, 0] + Self.box("iprp", ipco))
        let header = ImageHeader.parse(Data(Self.heicFtyp + meta))
        #expect(header == .parsed(ImageHeader(type: .heic, width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)))
    }

    @Test func isoBMFFMetaBoxRunningToTheEndIsParsed() {
        let ipco = Self.box("ipco", Self.ispe(640, 480))
        let meta = Self.box("meta", [0, 0, 0, 0] + Self.box("iprp", ipco), size: 0)
        #expect(ImageHeader.parse(Data(Self.heicFtyp + meta)) == .parsed(ImageHeader(type: .heic, width: 640, height: 480)))
    }

    @Test func unknownData() {
        #expect(ImageHeader.parse(Data()) == .needsMoreData)
        #expect(ImageHeader.parse(Data(repeating: 7, count: 40)) == .unavailable)
    }

    /// Random bytes after each signature never crash and never read out of bounds.
    @Test func fuzzedPrefixes() {
        var generator = SystemRandomNumberGenerator()
        let signatures: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("GIF89a".utf8),
            Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8X".utf8), [0, 0, 0, 0x10] + Array("ftypheic".utf8) + [0, 0, 0, 0],
        ]
        for signature in signatures {
            for _ in 0..<500 {
                let tail = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                _ = ImageHeader.parse(Data(signature + tail))
            }
        }
    }
}
