import Foundation
import NukeConformance
import NukeCore
import NukePixels
import Testing
@testable import NukeGIF

/// Decode to size streams frame 0's rows into the core's resampler: the result must equal the
/// full-size composited first frame resized, for every layout of frame 0 (interlaced or not,
/// offset, clipped, transparent, damaged).
@Suite("GIF decode to size")
struct GIFDecodeToSizeTests {
    private static func decode(_ data: Data, target: ImageSize) throws -> ImageContainer {
        try ImageDecoders.GIF(context: ImageDecodingContext(data: data, targetSize: target, contentMode: .aspectFit)).decode(data)
    }

    /// Frame 0 at full size, resized with the same resampler.
    private static func expected(_ full: Bitmap, target: ImageSize) -> Bitmap {
        full.resized(toFit: target, contentMode: .aspectFit)
    }

    @Test("streamed frame 0 equals ImageMagick's first frame resized", .enabled(if: gifFixturesExist), arguments: GIFFixture.all)
    func fixtures(_ fixture: GIFFixture) throws {
        let data = try GIFTestPaths.fixture(fixture.name)
        let reference = try GIFTestPaths.reference(fixture.name, frame: 0).converted(to: .rgba8)
        for target in [ImageSize(width: 7, height: 7), ImageSize(width: 13, height: 4), ImageSize(width: 1, height: 1)] {
            let container = try Self.decode(data, target: target)
            let expected = Self.expected(reference, target: target)
            #expect(container.image.bitmap.visibleDifferences(from: expected) == 0, "\(fixture.name) to \(target)")
            #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: reference.width, height: reference.height))
            #expect(container.animation?.frameCount == (fixture.frames > 1 ? fixture.frames : nil))
        }
    }

    @Test("read in pieces without previews, or progressively with them, the result is the same", .enabled(if: gifFixturesExist), arguments: ["interlaced.gif", "outside.gif", "transparent.gif"])
    func piecesAndPreviews(_ name: String) throws {
        let data = try GIFTestPaths.fixture(name)
        let target = ImageSize(width: 9, height: 9)
        let whole = try Self.decode(data, target: target)
        // Pieces, previews off: the registry's decode(_:reading:).
        let registry = ImageDecoderRegistry(codecs: [.gif])
        let pieces = try registry.decode(
            ImageDecodingContext(data: data.prefix(16), targetSize: target, contentMode: .aspectFit), reading: data.dropFirst(16).pieces(ofSize: 7)
        )
        #expect(pieces.image.bitmap == whole.image.bitmap)
        // Previews on: frame 0 is composited full size first, then resized at the end.
        let decoder = ImageDecoders.GIF(context: ImageDecodingContext(data: data, targetSize: target, contentMode: .aspectFit))
        var previews = 0
        for end in stride(from: 16, through: data.count, by: 5).map({ $0 }) + [data.count] where decoder.decodePartiallyDownloadedData(data.prefix(end)) != nil {
            previews += 1
        }
        let progressive = try decoder.decode(data)
        #expect(previews > 0)
        #expect(progressive.image.bitmap == whole.image.bitmap)
    }

    @Test("rows damaged LZW data never delivers are transparent, interlaced or not", arguments: [false, true])
    func damagedFrame(_ interlaced: Bool) throws {
        // A 1×10 screen and image whose LZW data holds one pixel: only row 0 arrives.
        var bytes = [UInt8](ImageDecodersGIFTests.tinyGIF(screenWidth: 1, screenHeight: 10))
        bytes[13 + 6 + 7] = 10
        if interlaced { bytes[13 + 6 + 9] |= 0x40 }
        let data = Data(bytes)
        let full = try ImageDecoders.GIF().decode(data).image.bitmap
        #expect(full.sample(x: 0, y: 0, channel: 3) == 255)
        #expect(full.sample(x: 0, y: 1, channel: 3) == 0)
        let target = ImageSize(width: 1, height: 5)
        let container = try Self.decode(data, target: target)
        #expect(container.image.bitmap == Self.expected(full, target: target))
        #expect((container.userInfo[.warningsKey] as? ImageDecodingWarnings)?.count == 1)
        let strict = ImageDecoders.GIF(context: ImageDecodingContext(data: data, targetSize: target, isStrict: true))
        #expect(throws: ImageCodecError.self) { try strict.decode(data) }
    }

    @Test("a large interlaced frame offset inside the screen streams to the same thumbnail")
    func largeInterlacedOffsetFrame() throws {
        // 301×203 screen, a 250×150 interlaced image at (30, 41): rows above, below and beside it are transparent.
        let data = Self.gif(screen: (301, 203), frame: (30, 41, 250, 150), interlaced: true)
        let full = try ImageDecoders.GIF().decode(data).image.bitmap
        #expect(full.sample(x: 0, y: 0, channel: 3) == 0)
        #expect(full.sample(x: 30, y: 41, channel: 3) == 255)
        for target in [ImageSize(width: 64, height: 64), ImageSize(width: 150, height: 150), ImageSize(width: 300, height: 202)] {
            let container = try Self.decode(data, target: target)
            #expect(container.image.bitmap == Self.expected(full, target: target), "to \(target)")
        }
    }

    @Test("cancellation stops the streamed frame")
    func cancellation() throws {
        let data = Self.gif(screen: (300, 300), frame: (0, 0, 300, 300), interlaced: false)
        let cancellation = ImageDecodingCancellation()
        cancellation.cancel()
        let context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 32, height: 32), cancellation: cancellation)
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoders.GIF(context: context).decode(data) }
        #expect(error.code == .cancelled)
    }

    /// A GIF with one image of 8-bit indices (a diagonal gradient through a 256-grey table) at
    /// `frame`'s position, LZW-coded without compression: a clear code before every 200 indices.
    static func gif(screen: (Int, Int), frame: (x: Int, y: Int, width: Int, height: Int), interlaced: Bool) -> Data {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        var bytes: [UInt8] = Array("GIF89a".utf8) + le16(screen.0) + le16(screen.1) + [0xF7, 0, 0]
        for i in 0..<256 { bytes += [UInt8(i), UInt8(255 - i), UInt8(i / 2)] }
        bytes += [0x2C] + le16(frame.x) + le16(frame.y) + le16(frame.width) + le16(frame.height) + [interlaced ? 0x40 : 0]
        bytes.append(8)
        // 9-bit codes: clear (256), then up to 200 literals (the table stays below 512), repeat.
        var codes: [Int] = []
        var sinceClear = 0
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                if sinceClear == 0 { codes.append(256) }
                codes.append((x + y * 3) & 0xFF)
                sinceClear = (sinceClear + 1) % 200
            }
        }
        codes.append(257)
        var packed: [UInt8] = []
        var buffer = 0, bits = 0
        for code in codes {
            buffer |= code << bits
            bits += 9
            while bits >= 8 {
                packed.append(UInt8(buffer & 0xFF))
                buffer >>= 8
                bits -= 8
            }
        }
        if bits > 0 { packed.append(UInt8(buffer & 0xFF)) }
        for start in stride(from: 0, to: packed.count, by: 255) {
            let block = packed[start..<min(start + 255, packed.count)]
            bytes.append(UInt8(block.count))
            bytes += block
        }
        bytes += [0, 0x3B]
        return Data(bytes)
    }
}
