import Foundation
import NukeCore
@testable import NukeHEIF
import Testing

/// What a file asks libheif to decode, checked before libheif reads it.
@Suite struct HEIFItemGraphTests {
    /// A box: size, type, body.
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + body
    }

    static func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func u32(_ value: Int) -> [UInt8] { u16(value >> 16) + u16(value & 0xFFFF) }

    /// A file whose meta box holds `pitm` = 1, a grid item 1 whose `dimg` names item 2
    /// `tiles` times, `extra` references, and a `side × side` `ispe` on item 2.
    static func file(tiles: Int, side: Int = 64, extra: [[UInt8]] = []) -> Data {
        let pitm = box("pitm", [0, 0, 0, 0] + u16(1))
        let dimg = box("dimg", u16(1) + u16(tiles) + Array([[UInt8]](repeating: u16(2), count: tiles).joined()))
        let iref = box("iref", [0, 0, 0, 0] + dimg + Array(extra.joined()))
        let ipco = box("ipco", box("ispe", [0, 0, 0, 0] + u32(side) + u32(side)))
        let ipma = box("ipma", [0, 0, 0, 0] + u32(1) + u16(2) + [1, 0x81])
        let meta = box("meta", [0, 0, 0, 0] + pitm + iref + box("iprp", ipco + ipma))
        return Data(box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)) + meta)
    }

    @Test func countsTilesAndTheirPixels() throws {
        let graph = try #require(HEIFItemGraph.parse(Self.file(tiles: 48)))
        #expect(graph.primary == 1)
        #expect(graph.needs[1]?.count == 48)
        #expect(graph.pixels[2] == 64 * 64)
        try graph.check(limits: .untrusted, format: .heic)
    }

    @Test func tooManyTilesAreRefused() throws {
        let graph = try #require(HEIFItemGraph.parse(Self.file(tiles: 20_000)))
        let error = try #require(throws: ImageCodecError.self) { try graph.check(limits: .default, format: .heic) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("20001 coded images"), "\(error)")
        // 100 tiles of 1024 × 1024 are 105 MP of coded pixels: within 3 × the untrusted 40 MP,
        // over 3 × a 10 MP limit and 128 × 128 of padding for each.
        let large = try #require(HEIFItemGraph.parse(Self.file(tiles: 100, side: 1024)))
        try large.check(limits: .untrusted, format: .heic)
        var limits = ImageLimits.untrusted
        limits.maxPixelCount = 10_000_000
        let pixels = try #require(throws: ImageCodecError.self) { try large.check(limits: limits, format: .heic) }
        #expect(pixels.code == .limitExceeded)
    }

    /// Item 2 is a tile of grid 1 and has grid 1 as its alpha (auxl from 1 to 2).
    @Test func aCycleIsCorrupt() throws {
        let alpha = Self.box("auxl", Self.u16(1) + Self.u16(1) + Self.u16(2))
        let graph = try #require(HEIFItemGraph.parse(Self.file(tiles: 1, extra: [alpha])))
        let error = try #require(throws: ImageCodecError.self) { try graph.check(limits: .default, format: .heic) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("1 → 2 → 1"), "\(error)")
    }

    /// The file the heif fuzz target found: grid 2's alpha is grid 4, whose tile is grid 2. libheif
    /// 1.15 decoded it for minutes, with thousands of threads; it now fails at once.
    @Test func theFuzzedFileFailsAtOnce() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/regressions/heif/grid-whose-alpha-is-itself.heic")
        let data = try Data(contentsOf: url)
        let graph = try #require(HEIFItemGraph.parse(data))
        #expect(graph.needs[2]?.contains(4) == true, "its auxl reference, whose box size runs past the file, is read")
        let started = ContinuousClock.now
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(data) }
        #expect(error.code == .corrupt)
        #expect(error.format == .heic)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// An AV1 image whose `iloc` extents hold no bytes: libheif 1.15 gave dav1d an empty buffer
    /// and leaked it (40 bytes a decode, LeakSanitizer's report at the end of fuzzing runs). It
    /// is refused before libheif sees it; the file as it was still decodes.
    @Test func anAV1ImageWithoutCodedDataIsCorrupt() throws {
        let original = try HEIFTestPaths.fixture("photo.avif")
        let graph = try #require(HEIFItemGraph.parse(original))
        let item = try #require(graph.primary)
        #expect(graph.types[item] == "av01")
        let length = try #require(graph.dataLengths[item])
        #expect(length > 0)
        _ = try ImageDecoderRegistry.shared.decode(original)

        // The same file with the extent's length (4 bytes after `iloc`) set to zero.
        var bytes = [UInt8](original)
        let iloc = try #require((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("iloc".utf8) })
        let at = try #require((iloc..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(Self.u32(length)) })
        bytes.replaceSubrange(at..<(at + 4), with: [0, 0, 0, 0])
        let empty = Data(bytes)
        #expect(HEIFItemGraph.parse(empty)?.dataLengths[item] == 0)
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(empty) }
        #expect(error.code == .corrupt)
        #expect(error.format == .avif)
        #expect(error.message.contains("AV1 image item \(item) has no coded data"), "\(error)")
    }

    /// The second cycle the heif fuzz target found: grid 4's tile is grid 2, and grid 2's alpha is
    /// grid 4, through an `auxl` reference that sits inside a `dimg` reference declaring more bytes
    /// than `iref` holds. libheif reads references one after another whatever their sizes say;
    /// before the graph did too, libheif decoded it with thousands of threads until the fuzzer's
    /// 10-second timeout.
    @Test func aReferenceHiddenInAnOversizedOneCounts() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/regressions/heif/auxl-inside-an-oversized-dimg-reference.heic")
        let data = try Data(contentsOf: url)
        let graph = try #require(HEIFItemGraph.parse(data))
        #expect(graph.needs[2] == [1, 4])
        #expect(graph.needs[4] == [2])
        let started = ContinuousClock.now
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(data) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("cycle"), "\(error)")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// libheif 1.15 reads an `iloc` length field that is not 4 or 8 bytes wide as 0 bytes long
    /// (the fuzzed file's field is 3 bytes wide: the leak LeakSanitizer reported at the end of a
    /// fuzzing hour). The graph reads it as libheif does, and refuses the empty AV1 image.
    @Test func anILocFieldLibheifReadsAsZeroIsEmpty() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/regressions/heif/iloc-three-byte-length-empty-av1-leak.avif")
        let data = try Data(contentsOf: url)
        let graph = try #require(HEIFItemGraph.parse(data))
        let item = try #require(graph.primary)
        #expect(graph.dataLengths[item] == 0)
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(data) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("AV1 image item \(item) has no coded data"), "\(error)")
    }

    /// libheif reads the first `iloc` entry of an item, and the first `iloc` box.
    @Test func theFirstLocationOfAnItemCounts() throws {
        let original = try HEIFTestPaths.fixture("photo.avif")
        let graph = try #require(HEIFItemGraph.parse(original))
        let item = try #require(graph.primary)
        // A second iloc box (version 0, 4-byte offsets and lengths) naming the item with no bytes.
        let second = Self.box("iloc", [0, 0, 0, 0, 0x44, 0x00] + Self.u16(1) + Self.u16(Int(item)) + Self.u16(0) + Self.u16(1) + Self.u32(0) + Self.u32(0))
        var bytes = [UInt8](original)
        let iloc = try #require((4..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("iloc".utf8) }) - 4
        bytes.insert(contentsOf: second, at: iloc + Int(Self.u32at(bytes, iloc)))
        // The meta box grows by the inserted box.
        let meta = try #require((4..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("meta".utf8) }) - 4
        bytes.replaceSubrange(meta..<(meta + 4), with: Self.u32(Int(Self.u32at(bytes, meta)) + second.count))
        #expect(HEIFItemGraph.parse(Data(bytes))?.dataLengths[item] == graph.dataLengths[item])
    }

    static func u32at(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
