import Foundation
import NukeCore
import NukeJPEG
import NukeNetpbm
import NukeSession
import Testing

/// A progressive JPEG decoded at 1/8 reads only the scans that scale shows (the DC of
/// full-resolution components, every scan of subsampled ones) and stops once they are complete:
/// the pixels equal djpeg's 1/8 decode of the whole file (Fixtures/jpeg-eighth, made by
/// scripts/make-fixtures.py).
@Suite("JPEG decodes at 1/8 read only the scans they show")
struct JPEGScanFilterTests {
    static let tags = ["420", "444", "422", "440", "gray", "420-restart", "420-script"]

    /// The decode request for djpeg's `-scale 1/8` size (26×17) of the 203×131 fixtures.
    static func context(_ data: Data, isCompleted: Bool = true) -> ImageDecodingContext {
        var context = ImageDecodingContext(data: data, isCompleted: isCompleted, targetSize: ImageSize(width: 26, height: 17), contentMode: .aspectFit)
        context.prefersFastScaling = true
        return context
    }

    static func fixture(_ tag: String) throws -> (data: Data, eighth: Bitmap) {
        let data = try JPEGFixtures.data("progressive-eighth-\(tag).jpg")
        let eighth = try Netpbm.decode(Data(contentsOf: JPEGFixtures.root.appendingPathComponent("Fixtures/jpeg-eighth/progressive-eighth-\(tag).pam")))
        return (data, eighth)
    }

    static let registry = ImageDecoderRegistry(codecs: [.jpeg])

    @Test("complete data equals djpeg -scale 1/8", arguments: tags)
    func oneShot(_ tag: String) throws {
        let (data, eighth) = try Self.fixture(tag)
        let container = try Self.registry.decode(Self.context(data))
        #expect(container.userInfo[.dctScaleKey] as? Double == 1.0 / 8)
        #expect(container.image.bitmap == eighth)
    }

    /// Read in pieces (what `nuke convert` does), the decode ends before the end of the file:
    /// every fixture's last scan refines only AC coefficients the 1/8 decode does not read.
    @Test("read in pieces, it stops reading early and equals djpeg -scale 1/8", arguments: tags)
    func readingStopsEarly(_ tag: String) throws {
        let (data, eighth) = try Self.fixture(tag)
        var offset = 0
        let piece = 256
        let container = try Self.registry.decode(Self.context(data.prefix(piece), isCompleted: false)) {
            offset += piece
            guard offset < data.count else { return nil }
            return data[offset..<min(offset + piece, data.count)]
        }
        #expect(container.image.bitmap == eighth)
        let lastScan = try #require(Self.sosOffsets(data).last)
        #expect(offset <= lastScan + 1 && offset + piece < data.count, "read to \(offset + piece) of \(data.count) bytes; the last scan starts at \(lastScan)")
    }

    /// A session ends (and its download may stop) as soon as the scans the decode reads are in.
    @Test func aSessionEndsBeforeTheLastScan() async throws {
        let (data, eighth) = try Self.fixture("420")
        let registry = Self.registry
        var context = registry.makeContext(for: Data(), isCompleted: false)
        context.prefersFastScaling = true
        context.contentMode = .aspectFit
        let session = ImageDecodingSession(configuration: .init(
            registry: registry, context: context, targetSize: { _ in ImageSize(width: 26, height: 17) }))
        var appended = 0
        while appended < data.count, !session.isEnded {
            session.append(data[appended..<min(appended + 200, data.count)])
            appended = min(appended + 200, data.count)
            await session.waitUntilProcessed()
        }
        #expect(session.isEnded)
        #expect(appended < data.count)
        session.finish()
        var final: ImageContainer?
        for await event in session.events {
            if case .final(let container, _) = event { final = container }
        }
        #expect(try #require(final).image.bitmap == eighth)
    }

    /// Dropped scans count towards `maxScanCount`: a 4:4:4 file whose luma AC scan (dropped at
    /// 1/8) is repeated 200 times is refused as libjpeg refuses it at full size.
    @Test func droppedScansCountTowardsTheScanCap() throws {
        let (data, _) = try Self.fixture("444")
        let offsets = Self.sosOffsets(data)
        // cjpeg's script: scan 2 is the luma's AC 1-5 (dropped at 1/8).
        let scan = data[offsets[1]..<offsets[2]]
        var bomb = Data(data[..<offsets[2]])
        for _ in 0..<200 { bomb.append(scan) }
        bomb.append(data[offsets[2]...])
        let error = try #require(throws: ImageCodecError.self) { try Self.registry.decode(Self.context(bomb)) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("exceeds maximum scans"))
        let full = try #require(throws: ImageCodecError.self) { try Self.registry.decode(ImageDecodingContext(data: bomb)) }
        #expect(full.code == .limitExceeded)
    }

    /// Cut before the DC refinement, the file lacks what the 1/8 decode reads: incomplete.
    @Test func cutBeforeTheScansItReadsIsIncomplete() throws {
        let (data, _) = try Self.fixture("444")
        let offsets = Self.sosOffsets(data)
        let cut = data.prefix(offsets[3] + 100)   // inside the 4th scan, before the DC refinement (7th)
        let error = try #require(throws: ImageCodecError.self) { try Self.registry.decode(Self.context(cut)) }
        #expect(error.code == .incomplete)
    }

    /// A decode at 1/4 reads every scan: the filter is off and the file is decoded whole.
    @Test func aLargerScaleReadsEveryScan() throws {
        let (data, _) = try Self.fixture("420")
        var context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 51, height: 33), contentMode: .aspectFit)
        context.prefersFastScaling = true
        let container = try Self.registry.decode(context)
        #expect(container.userInfo[.dctScaleKey] as? Double == 2.0 / 8)
        var offset = 0
        _ = try Self.registry.decode(ImageDecodingContext(data: data.prefix(256), isCompleted: false, targetSize: ImageSize(width: 51, height: 33))) {
            offset += 256
            return offset < data.count ? data[offset..<min(offset + 256, data.count)] : nil
        }
        #expect(offset >= data.count)
    }

    /// The offsets of the SOS markers (the fixtures have no fill bytes).
    static func sosOffsets(_ data: Data) -> [Int] {
        let b = [UInt8](data)
        var offsets: [Int] = []
        var i = 2
        while i + 3 < b.count, b[i] == 0xFF, b[i + 1] != 0xD9 {
            let isScan = b[i + 1] == 0xDA
            if isScan { offsets.append(i) }
            i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
            // Entropy-coded data: to the next marker other than a stuffed zero or a restart.
            while isScan, i + 1 < b.count, !(b[i] == 0xFF && b[i + 1] != 0x00 && !(0xD0...0xD7).contains(b[i + 1])) { i += 1 }
        }
        return offsets
    }
}
