import CPNGShim
import CPNGShimTesting
import Foundation
import Testing

/// The shim's own image data path (zlib, then unfiltering with SSE2) against libpng's on the same
/// bytes: the same pixels for every file it covers, and the same verdict for damaged image data.
@Suite struct PNGImageDataPathTests {
    /// What a decode through the C API gave.
    struct Outcome: Equatable {
        var status: nuke_status
        var pixels: [UInt8]
        var exif: [UInt8]?
    }

    /// Decodes with the shim directly, `step` bytes per feed; `libpngOnly` leaves the image data to
    /// libpng. `ownPath` tells whether the shim's path read it.
    static func decode(_ bytes: [UInt8], step: Int, libpngOnly: Bool) -> (outcome: Outcome, ownPath: Bool) {
        var options = nukepng_decoder_options(max_dimension: 1 << 16, max_pixel_count: 1 << 26, max_decoded_bytes: 1 << 28,
                                              max_metadata_bytes: 1 << 20, keep_16_bit: 0)
        guard let decoder = nukepng_decoder_create(&options) else { return (Outcome(status: NUKE_STATUS_INTERNAL, pixels: []), false) }
        defer { nukepng_decoder_destroy(decoder) }
        if libpngOnly { nukepng_testing_use_libpng_only(decoder) }
        var pixels: [UInt8] = []
        var status = NUKE_STATUS_NEED_MORE
        var offset = 0
        bytes.withUnsafeBufferPointer { input in
            while offset < input.count {
                let length = min(step, input.count - offset)
                var consumed = 0
                status = pixels.withUnsafeMutableBufferPointer { buffer in
                    nukepng_decoder_feed(decoder, input.baseAddress! + offset, length, buffer.baseAddress, buffer.count, 0, &consumed)
                }
                offset += consumed
                if status == NUKE_STATUS_PAUSED {
                    var header = nukepng_header()
                    _ = nukepng_decoder_header(decoder, &header)
                    pixels = [UInt8](repeating: 0, count: header.row_bytes * Int(header.height))
                    continue
                }
                if status != NUKE_STATUS_NEED_MORE { break }
            }
        }
        var exifBytes: UnsafePointer<UInt8>?
        var exifSize = 0
        let exif = nukepng_decoder_exif(decoder, &exifBytes, &exifSize) != 0 && exifBytes != nil
            ? Array(UnsafeBufferPointer(start: exifBytes, count: exifSize)) : nil
        let ok = status == NUKE_STATUS_OK
        return (Outcome(status: status, pixels: ok ? pixels : [], exif: ok ? exif : nil), nukepng_testing_uses_own_idat(decoder) != 0)
    }

    /// Every PNG of the fixtures and (when present) of the public corpora.
    static let files: [URL] = {
        var folders = [PNGTestPaths.fixtures]
        if pngCorporaExist { folders += [PNGTestPaths.pngSuite, PNGTestPaths.testPNGs, PNGTestPaths.pillow] }
        return folders.flatMap { folder in PNGTestPaths.pngFiles(in: folder).map { folder.appendingPathComponent($0) } }
    }()

    @Test func ownPathGivesLibpngsPixelsForEveryFile() throws {
        var covered = 0
        for url in Self.files {
            let bytes = [UInt8](try Data(contentsOf: url))
            for step in [1 << 20, 4096, 7] where step < 8 ? bytes.count < 20_000 : true {
                let own = Self.decode(bytes, step: step, libpngOnly: false)
                let libpng = Self.decode(bytes, step: step, libpngOnly: true)
                let same = own.outcome == libpng.outcome
                #expect(same, "\(url.lastPathComponent), \(step) bytes per feed: \(own.outcome.status.rawValue) vs \(libpng.outcome.status.rawValue)")
                #expect(!libpng.ownPath)
                if own.ownPath && step == 4096 { covered += 1 }
            }
        }
        // The fixtures alone hold 8-bit RGB, RGBA and gray files the path reads.
        #expect(covered >= (pngCorporaExist ? 30 : 5), "\(covered) files on the shim's own path")
    }

    /// Damaged image data in the files the path covers: the verdict (and the pixels when it
    /// decodes) is libpng's.
    @Test func damagedImageDataGetsLibpngsVerdict() throws {
        var checked = 0
        for url in Self.files {
            let bytes = [UInt8](try Data(contentsOf: url))
            guard Self.decode(bytes, step: 1 << 20, libpngOnly: false).ownPath, let editor = PNGTestChunkEditor(Data(bytes)),
                  let first = editor.index(of: "IDAT") else { continue }
            let idat = editor.chunks.indices.filter { editor.chunks[$0].type == "IDAT" }
            let stream = idat.flatMap { editor.chunks[$0].data }
            guard stream.count > 16 else { continue }
            /// The file with its image data replaced by `data`, in chunks of `size` bytes.
            func with(_ data: [UInt8], chunkSize: Int = 1 << 30, after: [PNGTestChunkEditor.Chunk] = []) -> [UInt8] {
                var edited = editor
                edited.chunks.removeAll { $0.type == "IDAT" }
                let pieces = stride(from: 0, to: data.count, by: chunkSize).map {
                    PNGTestChunkEditor.Chunk(type: "IDAT", data: Array(data[$0..<min($0 + chunkSize, data.count)]))
                }
                edited.chunks.insert(contentsOf: pieces + after, at: first)
                return [UInt8](edited.data)
            }
            var variants: [(String, [UInt8])] = [
                ("no checksum", with(Array(stream.dropLast(4)))),
                ("bad checksum", with(Array(stream.dropLast()) + [stream.last! ^ 0x55])),
                ("garbage after the stream", with(stream + [1, 2, 3, 4, 5])),
                ("garbage after the stream, own chunk", with(stream, after: [.init(type: "IDAT", data: [9, 9, 9])])),
                ("split in 5-byte chunks", with(stream, chunkSize: 5)),
                ("text between IDATs", {
                    var edited = PNGTestChunkEditor(Data(with(stream, chunkSize: (stream.count + 1) / 2)))!
                    edited.chunks.insert(.init(type: "tEXt", data: Array("a\0b".utf8)), at: first + 1)
                    return [UInt8](edited.data)
                }()),
                ("IDAT after text", with(stream, after: [.init(type: "tEXt", data: Array("a\0b".utf8)), .init(type: "IDAT", data: [])])),
                ("eXIf after the image", with(stream, after: [.init(type: "eXIf", data: Array("MM\0*\0\0\0\u{8}\0\0".utf8))])),
                ("truncated stream", with(Array(stream.prefix(stream.count / 2)))),
            ]
            for position in [stream.count / 3, stream.count / 2, stream.count * 3 / 4] {
                var damaged = stream
                damaged[position] ^= 0xA5
                variants.append(("byte \(position) flipped", with(damaged)))
            }
            for (name, variant) in variants {
                for step in [1 << 20, 13] {
                    let own = Self.decode(variant, step: step, libpngOnly: false)
                    let libpng = Self.decode(variant, step: step, libpngOnly: true)
                    let same = own.outcome == libpng.outcome
                    #expect(same, "\(url.lastPathComponent), \(name), \(step): status \(own.outcome.status.rawValue) vs \(libpng.outcome.status.rawValue)")
                }
            }
            checked += 1
            if checked == 12 { break }
        }
        #expect(checked >= 3)
    }

    /// The unfilter routines against the PNG specification's formulas, written here in Swift,
    /// for every filter and pixel size, on random rows.
    @Test func unfilteringFollowsTheSpecification() {
        var generator = SystemRandomNumberGenerator()
        for bpp in 1...4 {
            for filter in 0...4 {
                for count in [bpp, bpp * 5, bpp * 33, bpp * 257] {
                    let src = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    let prev = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    let expected = Self.specification(filter: filter, src: src, prev: prev, bpp: bpp)
                    for simd: Int32 in [0, 1] {
                        var dst = [UInt8](repeating: 0, count: count)
                        nukepng_testing_unfilter(Int32(filter), &dst, src, prev, count, Int32(bpp), simd)
                        #expect(dst == expected, "filter \(filter), \(bpp) bytes per pixel, \(count) bytes, SIMD \(simd)")
                    }
                }
            }
        }
    }

    /// The shim's Adler-32 against zlib's, for every length up to 600 from every start value
    /// class, and for long inputs (several of zlib's 5552-byte reduction blocks), all-0xFF ones
    /// included (the largest sums).
    @Test func adler32MatchesZlib() {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let ones = [UInt8](repeating: 0xFF, count: 70_000)
        var mismatches = 0
        for bytes in [random, ones] {
            bytes.withUnsafeBufferPointer { buffer in
                let base = buffer.baseAddress!
                for seed: UInt32 in [1, 0xFFF0_FFF0, 0x1234_5678 % 65521] {
                    for length in Array(0...600) + [5551, 5552, 5553, 11_104, 33_333, 70_000] {
                        let start = length % 7
                        let count = min(length, bytes.count - start)
                        if nukepng_testing_adler32(seed, base + start, count) != nukepng_adler32_reference(seed, base + start, count) { mismatches += 1 }
                    }
                }
            }
        }
        #expect(mismatches == 0)
    }

    /// Two Paeth rows unfiltered together: the second's row above is the first's output.
    @Test func paethRowPairsFollowTheSpecification() {
        var generator = SystemRandomNumberGenerator()
        for bpp in 1...4 {
            for count in [bpp, bpp * 2, bpp * 31, bpp * 400] {
                let random = { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
                let prev = random(), src0 = random(), src1 = random()
                let row0 = Self.specification(filter: 4, src: src0, prev: prev, bpp: bpp)
                let row1 = Self.specification(filter: 4, src: src1, prev: row0, bpp: bpp)
                var dst0 = [UInt8](repeating: 0, count: count), dst1 = dst0
                nukepng_testing_paeth_pair(&dst0, src0, prev, &dst1, src1, count, Int32(bpp))
                #expect(dst0 == row0 && dst1 == row1, "\(bpp) bytes per pixel, \(count) bytes")
            }
        }
    }

    static func specification(filter: Int, src: [UInt8], prev: [UInt8], bpp: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: src.count)
        for i in 0..<src.count {
            let a = i >= bpp ? Int(out[i - bpp]) : 0
            let b = Int(prev[i])
            let c = i >= bpp ? Int(prev[i - bpp]) : 0
            let predictor: Int
            switch filter {
            case 1: predictor = a
            case 2: predictor = b
            case 3: predictor = (a + b) / 2
            case 4:
                let p = a + b - c
                let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            default: predictor = 0
            }
            out[i] = UInt8((Int(src[i]) + predictor) & 0xFF)
        }
        return out
    }
}
