import CPNGShim
import CPNGShimTesting
import Foundation
import NukeCore
import Testing
@testable import NukePNG

/// How the C shim classifies failures and warnings without reading libpng's messages: its
/// chunk walker (chunk lengths), its own limit checks, the rows libpng delivered.
@Suite struct PNGShimClassificationTests {
    /// A small non-interlaced RGB PNG written by our encoder (one IDAT).
    static func sample() throws -> Data {
        let bitmap = PNGTestImages.gradient(width: 24, height: 16, format: .rgb8)
        return try ImageEncoders.PNG().encode(Image(bitmap: bitmap))
    }

    /// `data` with a `tEXt` chunk of `length` bytes after IHDR.
    static func withText(_ data: Data, length: Int) throws -> Data {
        var editor = try #require(PNGTestChunkEditor(data))
        editor.chunks.insert(.init(type: "tEXt", data: Array("Comment\0".utf8) + [UInt8](repeating: 0x61, count: length - 8)), at: 1)
        return editor.data
    }

    /// Decodes `data` through one session fed in pieces of `step` bytes.
    static func session(_ data: Data, step: Int, limits: ImageLimits = .default) throws -> PNGDecodingSession {
        let session = try PNGDecodingSession(configuration: ImageDecodingContext(data: Data(), limits: limits))
        var start = data.startIndex
        while start < data.endIndex {
            let end = min(start + step, data.endIndex)
            let consumed = try session.feed(data[start..<end], forPreviews: false)
            if consumed == 0 { break }
            start += consumed
        }
        return session
    }

    @Test(arguments: [1, 3, 7, 4096])
    func ancillaryChunkLongerThanTheMetadataLimitIsALimit(_ step: Int) throws {
        let data = try Self.withText(Self.sample(), length: 5000)
        let limits = ImageLimits(maxMetadataBytes: 1000)
        let error = try #require(throws: ImageCodecError.self) { try Self.session(data, step: step, limits: limits) }
        #expect(error.code == .limitExceeded, "\(error)")
        #expect(error.message.contains("tEXt"), "\(error)")
        // Within the limit the text chunk is skipped and the image decodes.
        let session = try Self.session(data, step: step, limits: ImageLimits(maxMetadataBytes: 5000))
        #expect(try session.finish().image.width == 24)
    }

    @Test func dimensionLimitIsCheckedByTheShimNotLibpngsUserLimits() throws {
        let data = try Self.sample()
        let error = try #require(throws: ImageCodecError.self) {
            try PNGTestDecoding.decode(data, limits: ImageLimits(maxDimension: 20))
        }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("24×16"), "\(error)")
        #expect(try PNGTestDecoding.decode(data, limits: ImageLimits(maxDimension: 24)).image.width == 24)
    }

    @Test(arguments: [1, 5, 4096])
    func ancillaryChunkWithABadCRCIsAWarning(_ step: Int) throws {
        var editor = try #require(PNGTestChunkEditor(try Self.withText(Self.sample(), length: 20)))
        editor.chunks[1].crc = 0x1234_5678
        let session = try Self.session(editor.data, step: step)
        #expect(try session.finish().image.height == 16)
        #expect(session.warnings?.count == 1)
        #expect(session.warnings?.first.isEmpty == false)
        let clean = try Self.session(try Self.sample(), step: step)
        #expect(clean.warnings == nil)
    }

    /// The walker checks critical chunks' CRCs itself (libpng is told not to): a wrong one fails
    /// the decode however the bytes arrive, naming the chunk as libpng would.
    @Test(arguments: [1, 3, 7, 64, 4096])
    func criticalChunkWithABadCRCIsCorrupt(_ step: Int) throws {
        for type in ["IHDR", "IDAT", "IEND"] {
            var editor = try #require(PNGTestChunkEditor(try Self.sample()))
            let index = try #require(editor.index(of: type))
            editor.chunks[index].crc = PNGTestChunkEditor.crc32(Array(type.utf8) + editor.chunks[index].data) ^ 1
            let error = try #require(throws: ImageCodecError.self) { _ = try Self.session(editor.data, step: step).finish() }
            #expect(error.code == .corrupt, "\(type): \(error)")
            #expect(error.message.contains("\(type): CRC error"), "\(error)")
        }
        #expect(try Self.session(try Self.sample(), step: step).finish().image.height == 16)
    }

    /// The walker's CRC (carry-less multiplication on x86-64) against zlib's, for every length
    /// up to 1 KiB at every alignment of a 16-byte lane, and for long random inputs.
    @Test func chunkCRCMatchesZlib() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            var mismatches = 0
            for length in 0...1024 {
                for offset in 0..<16 {
                    let seed: UInt32 = length % 3 == 0 ? 0 : UInt32(truncatingIfNeeded: length &* 2_654_435_761)
                    if nukepng_crc32(seed, base + offset, length) != nukepng_crc32_reference(seed, base + offset, length) { mismatches += 1 }
                }
            }
            for _ in 0..<50 {
                let offset = Int.random(in: 0..<1000, using: &generator), length = Int.random(in: 0..<(buffer.count - 1000), using: &generator)
                let seed = UInt32.random(in: 0...UInt32.max, using: &generator)
                if nukepng_crc32(seed, base + offset, length) != nukepng_crc32_reference(seed, base + offset, length) { mismatches += 1 }
            }
            #expect(mismatches == 0)
            // A known value: the CRC of "IEND" is the one every PNG ends with.
            #expect(Array("IEND".utf8).withUnsafeBufferPointer { nukepng_crc32(0, $0.baseAddress, 4) } == 0xAE42_6082)
        }
    }

    @Test(arguments: [1, 2, 3, 4096])
    func badChecksumAfterTheLastRowIsCorrupt(_ step: Int) throws {
        // The Adler-32 ends the zlib stream: the rows are all out before it is read when the
        // data arrives slowly, so libpng only warns; the shim makes it an error, by state.
        var editor = try #require(PNGTestChunkEditor(try Self.sample()))
        let idat = try #require(editor.index(of: "IDAT"))
        editor.chunks[idat].data[editor.chunks[idat].data.count - 1] ^= 0xFF
        let error = try #require(throws: ImageCodecError.self) { try Self.session(editor.data, step: step).finish() }
        #expect(error.code == .corrupt, "\(error)")
    }

    @Test(arguments: [1, 4096])
    func anotherZlibStreamAfterTheImageIsAWarning(_ step: Int) throws {
        // Like Pillow's hopper_idat_after_image_end.png: the IDAT repeated after a complete stream.
        var editor = try #require(PNGTestChunkEditor(try Self.sample()))
        let idat = try #require(editor.index(of: "IDAT"))
        editor.chunks.insert(editor.chunks[idat], at: idat + 1)
        let session = try Self.session(editor.data, step: step)
        #expect(try session.finish().image.bitmap == PNGTestDecoding.decode(try Self.sample()).image.bitmap)
        #expect(session.warnings?.count ?? 0 >= 1)
    }

    @Test func truncatedCompressedDataBeforeTheLastRowIsCorrupt() throws {
        // IDAT cut short (chunk length and CRC fixed up), then IEND: rows are missing.
        var editor = try #require(PNGTestChunkEditor(try Self.sample()))
        let idat = try #require(editor.index(of: "IDAT"))
        editor.chunks[idat].data = Array(editor.chunks[idat].data.prefix(editor.chunks[idat].data.count / 2))
        let error = try #require(throws: ImageCodecError.self) { try PNGTestDecoding.decode(editor.data) }
        #expect(error.code == .corrupt, "\(error)")
    }
}
