import Foundation
import NukeConformance
import NukeCore
@testable import NukeJPEG
import Testing

/// The public corpora for header tests.
enum JPEGHeaderFixtures {
    static let corpora = JPEGFixtures.corpora.deletingLastPathComponent()
    static var corporaExist: Bool { JPEGFixtures.corporaExist }

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

/// The JPEG codec's header hook (``ImageDecoders/JPEG/parseHeader(_:)``), through the registry.
@Suite struct JPEGHeaderTests {
    /// The header through the registry's hooks, or `nil`.
    func header(_ data: Data) -> ImageHeader? {
        if case .parsed(let header) = registry.parseHeader(data) { return header }
        return nil
    }

    let registry = ImageDecoderRegistry(codecs: [.jpeg])

    @Test func jpegBaselineBehindLargeEXIF() throws {
        let bytes = makeJPEGHeader(width: 4_000, height: 3_000, exifPadding: 100_000)
        let header = try #require(self.header(Data(bytes)))
        #expect(header.type == .jpeg)
        #expect(header.size == ImageSize(width: 4_000, height: 3_000))
        #expect(header.bitDepth == 8)
        #expect(header.componentCount == 3)
        #expect(header.isProgressive == false)
        #expect(header.orientation == .right)
    }

    @Test func jpegProgressive() throws {
        let header = try #require(self.header(Data(makeJPEGHeader(width: 450, height: 300, sof: 0xC2))))
        #expect(header.isProgressive)
        #expect(header.size == ImageSize(width: 450, height: 300))
    }

    @Test func jpegEveryPrefixNeedsMoreData() {
        let bytes = makeJPEGHeader(width: 64, height: 48, exifPadding: 300)
        let sofEnd = bytes.count - 14 - 9  // neither the SOS segment nor SOF's component table is needed
        for length in 0..<sofEnd {
            #expect(registry.parseHeader(Data(bytes.prefix(length))) == .needsMoreData, "prefix \(length)")
        }
        #expect(header(Data(bytes.prefix(sofEnd)))?.width == 64)
    }

    @Test func jpegSOSBeforeFrameIsUnavailable() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(registry.parseHeader(Data(bytes)) == .unavailable)
    }

    @Test func jpegGarbageAfterSOIIsUnavailable() {
        #expect(registry.parseHeader(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0x12, 0x34, 0, 0, 0, 0])) == .unavailable)
        #expect(registry.parseHeader(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x12, 0x34, 0x56, 0, 0, 0])) == .unavailable)
    }

    @Test(.enabled(if: JPEGHeaderFixtures.corporaExist))
    func jpegCorpora() throws {
        let progressive = try JPEGHeaderFixtures.corpus("jpeg/kean_Nuke/Tests/Resources/progressive.jpeg")
        let header450 = try #require(header(progressive))
        #expect(header450.size == ImageSize(width: 450, height: 300))
        #expect(header450.isProgressive)
        #expect(header450.bitDepth == 8)
        #expect(header450.componentCount == 3)
        #expect(try scans(progressive) == 10)
        // SOF2 at byte 7394, behind EXIF.
        let tricky = try JPEGHeaderFixtures.corpus("jpeg/kean_Nuke/Tests/Resources/tricky_progressive.jpeg")
        #expect(registry.parseHeader(tricky.prefix(7_000)) == .needsMoreData)
        let trickyHeader = try #require(header(tricky))
        #expect(trickyHeader.isProgressive)
        #expect(try scans(tricky) == 10)
        let baseline = try JPEGHeaderFixtures.corpus("jpeg/libjpeg-turbo_libjpeg-turbo/testimages/testorig.jpg")
        #expect(header(baseline)?.size == ImageSize(width: 227, height: 149))
        #expect(try scans(baseline) == 1)
    }

    /// The scans libjpeg read, as the final image reports them.
    private func scans(_ data: Data) throws -> Int? {
        try ImageDecoders.JPEG().decode(data).userInfo[.scanNumberKey] as? Int
    }

    /// Random bytes after each signature never crash and never read out of bounds.
    /// Mutated and truncated JPEGs: whatever the hook answers agrees with libjpeg. A header it
    /// reads is the size libjpeg decodes (when libjpeg decodes the file at all), and a prefix it
    /// says needs more data is one libjpeg cannot read a frame header from either. Seeded, so a
    /// failure names the case that reproduces it.
    @Test(arguments: ["baseline-420.jpg", "progressive.jpg", "exif-orientation-6-le.jpg"])
    func mutatedFilesAgreeWithLibjpeg(_ name: String) throws {
        let original = [UInt8](try JPEGFixtures.data(name))
        var generator = SeededGenerator(seed: 0x4A50_4547 ^ UInt64(name.utf8.count))
        var parsed = 0
        for round in 0..<300 {
            var bytes = original
            // Up to four random bytes changed in the first 600 (where markers and segment lengths
            // are), then a random prefix.
            for _ in 0...Int.random(in: 0...3, using: &generator) {
                bytes[Int.random(in: 2..<min(600, bytes.count), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let prefix = Data(bytes.prefix(Int.random(in: 3...bytes.count, using: &generator)))
            let decoded = try? ImageDecoderRegistry(codecs: [.jpeg]).decode(ImageDecodingContext(data: prefix, limits: .unlimited))
            switch registry.parseHeader(prefix) {
            case .parsed(let header):
                parsed += 1
                #expect((1...65_535).contains(header.width) && (1...65_535).contains(header.height), "round \(round): \(header)")
                if let decoded {
                    #expect(decoded.image.width == header.width && decoded.image.height == header.height,
                            "round \(round): the hook read \(header.size), libjpeg decoded \(decoded.image.width)×\(decoded.image.height)")
                }
            case .needsMoreData:
                #expect(decoded == nil, "round \(round): libjpeg decoded a prefix whose header the hook could not finish")
            case .unavailable:
                break
            }
        }
        #expect(parsed > 0, "no mutated prefix kept a readable header: the test exercises nothing")
    }
}
