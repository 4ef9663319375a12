import Foundation
import NukeCore
import NukePixels
import Testing
@testable import NukePNG

/// ``ImageDecoders/PNG`` on the public corpora in `../shared/corpora/png` (skipped when absent).
@Suite(.enabled(if: pngCorporaExist)) struct ImageDecodersPNGCorporaTests {
    /// Every interlaced PngSuite file with its non-interlaced twin.
    static let twins: [String] = {
        let top = PNGTestPaths.pngFiles(in: PNGTestPaths.pngSuite).filter { $0.hasPrefix("i") }
        let nested = PNGTestPaths.pngFiles(in: PNGTestPaths.pngSuite.appendingPathComponent("interlaced")).map { "interlaced/" + $0 }
        return top + nested
    }()

    @Test(arguments: twins)
    func interlacedFileDecodesLikeItsTwin(_ name: String) throws {
        let interlaced = try Data(contentsOf: PNGTestPaths.pngSuite.appendingPathComponent(name))
        let twinName = String(name.split(separator: "/").last!.dropFirst())
        let plain = try Data(contentsOf: PNGTestPaths.pngSuite.appendingPathComponent(twinName))
        for highBitDepth in [false, true] {
            let a = try PNGTestDecoding.decode(interlaced, highBitDepth: highBitDepth)
            let b = try PNGTestDecoding.decode(plain, highBitDepth: highBitDepth)
            #expect(a.image.bitmap == b.image.bitmap)
            // (libpng's "ift*" copies are not all interlaced: compare with the header.)
            #expect(a.userInfo[.isProgressiveKey] as? Bool == PNGTestChunks(interlaced)?.isInterlaced)
            #expect(b.userInfo[.isProgressiveKey] as? Bool == false)
        }
        try ImageDecodersPNGProgressiveTests.check(interlaced, ends: Array(stride(from: 1, to: interlaced.count, by: 7)))
    }

    /// libpng's colour-type test set: 16-bit decodes scale to exactly the 8-bit decode.
    @Test(arguments: PNGTestPaths.pngFiles(in: PNGTestPaths.testPNGs) + PNGTestPaths.pngFiles(in: PNGTestPaths.pngSuite))
    func sixteenBitDecodeScalesToTheEightBitDecode(_ name: String) throws {
        let folder = name.hasPrefix("bas") || name.hasPrefix("ft") || name.hasPrefix("i") ? PNGTestPaths.pngSuite : PNGTestPaths.testPNGs
        let data = try Data(contentsOf: folder.appendingPathComponent(name))
        let eight = try PNGTestDecoding.decode(data).image.bitmap
        let sixteen = try PNGTestDecoding.decode(data, highBitDepth: true).image.bitmap
        #expect(eight.pixelFormat.bitsPerChannel == 8)
        #expect(sixteen.converted(to: eight.pixelFormat) == eight)
        let chunks = try #require(PNGTestChunks(data))
        #expect(eight.pixelFormat.channels == chunks.expectedChannels, "\(name): \(eight.pixelFormat)")
        #expect(sixteen.pixelFormat.bitsPerChannel == (chunks.bitDepth == 16 ? 16 : 8))
    }

    /// The crashers `tests/pngtest-all` expects to fail. badcrc.png passes pngtest only with
    /// `--relaxed` (CRC checks off); with libpng's default checks, as here, it fails too.
    @Test(arguments: PNGTestPaths.pngFiles(in: PNGTestPaths.crashers).filter { $0 != "empty_ancillary_chunks.png" })
    func crasherThrows(_ name: String) throws {
        let data = try Data(contentsOf: PNGTestPaths.crashers.appendingPathComponent(name))
        #expect(throws: ImageCodecError.self) { try PNGTestDecoding.decode(data) }
        // Progressively too, without a crash.
        let decoder = ImageDecoders.PNG()
        for end in stride(from: 1, to: data.count, by: max(1, data.count / 16)) {
            _ = decoder.decodePartiallyDownloadedData(data.prefix(end))
        }
        #expect(throws: ImageCodecError.self) { try decoder.decode(data) }
    }

    @Test func emptyAncillaryChunksMayDecode() throws {
        let data = try Data(contentsOf: PNGTestPaths.crashers.appendingPathComponent("empty_ancillary_chunks.png"))
        do {
            let container = try PNGTestDecoding.decode(data)
            #expect(container.image.width > 0)
        } catch let error as ImageCodecError {
            #expect(error.code == .corrupt)
        }
    }

    @Test(arguments: ["truncated_image.png", "truncated_end_chunk.png"])
    func pillowsTruncatedFilesAreIncomplete(_ name: String) throws {
        let data = try Data(contentsOf: PNGTestPaths.pillow.appendingPathComponent(name))
        let error = try #require(throws: ImageCodecError.self) { try PNGTestDecoding.decode(data) }
        #expect(error.code == .incomplete, "\(error)")
    }

    @Test(arguments: ["broken.png", "broken_data_stream.png"])
    func pillowsBrokenFilesThrow(_ name: String) throws {
        let data = try Data(contentsOf: PNGTestPaths.pillow.appendingPathComponent(name))
        #expect(throws: ImageCodecError.self) { try PNGTestDecoding.decode(data) }
    }

    @Test func decompressionBombIsNotInflated() throws {
        let data = try Data(contentsOf: PNGTestPaths.pillow.appendingPathComponent("png_decompression_dos.png"))
        let before = Self.maximumResidentBytes()
        let clock = ContinuousClock()
        let start = clock.now
        // The text chunks are skipped without decompression: the image decodes (or, if the
        // file is otherwise broken, fails) quickly and with little memory.
        _ = try? PNGTestDecoding.decode(data)
        #expect(clock.now - start < .seconds(2))
        #expect(Self.maximumResidentBytes() - before < 256 << 20)
    }

    @Test(arguments: ["hopper.png", "p_16.png", "tRNS_null_1x1.png", "itxt_chunks.png", "exif.png", "hopper_idat_after_image_end.png"])
    func pillowsValidFilesDecode(_ name: String) throws {
        let data = try Data(contentsOf: PNGTestPaths.pillow.appendingPathComponent(name))
        let container = try PNGTestDecoding.decode(data)
        #expect(container.image.width > 0)
        if name == "exif.png" {
            #expect(container.image.exif != nil)
        }
        try ImageDecodersPNGProgressiveTests.check(data, ends: Array(stride(from: 1, to: data.count, by: max(1, data.count / 40))))
    }

    static func maximumResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
