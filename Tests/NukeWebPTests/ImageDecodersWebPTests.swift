import Foundation
import NukeConformance
import NukeCore
import NukePixels
import NukeWebP
import Testing

/// A `dwebp -scale` reference of Fixtures/webp/manifest.json ("scaled"): the fixture fitted into
/// `target` by libwebp's own scaler.
struct WebPScaledReference: Sendable, CustomStringConvertible {
    var file: String
    var target: ImageSize
    var size: ImageSize
    var reference: String
    var description: String { "\(file) → \(target)" }

    private struct Manifest: Decodable { var fixtures: [Entry] }
    private struct Entry: Decodable {
        var file: String
        var scaled: [Scaled]?
    }
    private struct Scaled: Decodable {
        var target: [Int]
        var width: Int
        var height: Int
        var reference: String
    }

    static let all: [WebPScaledReference] = {
        guard let data = try? Data(contentsOf: WebPTestPaths.fixtures.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures.flatMap { entry in
            (entry.scaled ?? []).map {
                WebPScaledReference(file: entry.file, target: ImageSize(width: $0.target[0], height: $0.target[1]),
                                    size: ImageSize(width: $0.width, height: $0.height), reference: $0.reference)
            }
        }
    }()
}

/// One animated fixture of Fixtures/webp/manifest.json with its frame facts.
struct WebPAnimatedFixture: Decodable, Sendable, CustomStringConvertible {
    var file: String
    var frames: Int
    var loop: Int
    var durations: [Double]
    var background: [Int]?
    var description: String { file }

    private struct Manifest: Decodable { var fixtures: [Entry] }
    private struct Entry: Decodable {
        var file: String
        var frames: Int?
        var loop: Int?
        var durations: [Double]?
        var background: [Int]?
    }

    static let all: [WebPAnimatedFixture] = {
        guard let data = try? Data(contentsOf: WebPTestPaths.fixtures.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else { return [] }
        return manifest.fixtures.compactMap { entry in
            guard let frames = entry.frames else { return nil }
            return WebPAnimatedFixture(file: entry.file, frames: frames, loop: entry.loop ?? 0, durations: entry.durations ?? [], background: entry.background)
        }
    }()
}

@Suite struct ImageDecodersWebPTests {
    func decode(_ data: Data, configure: (inout ImageDecodingContext) -> Void = { _ in }) throws -> ImageContainer {
        var context = ImageDecodingContext(data: data)
        configure(&context)
        return try ImageDecoderRegistry.shared.decode(context)
    }

    // MARK: - Animation

    /// Every frame, composited, equals Pillow's (libwebp's WebPAnimDecoder); durations, loop
    /// count and background colour are as stored.
    @Test(arguments: WebPAnimatedFixture.all)
    func animatedFramesMatchPillow(_ fixture: WebPAnimatedFixture) throws {
        let container = try decode(try WebPTestPaths.fixture(fixture.file))
        let animation = try #require(container.animation)
        #expect(animation.frameCount == fixture.frames)
        #expect(animation.loopCount == fixture.loop)
        #expect(container.image.loopCount == fixture.loop)
        #expect(animation.frameInfos.map(\.duration) == fixture.durations)
        if let background = fixture.background {
            #expect(animation.backgroundColor?.map(Int.init) == background)
        }
        let stem = fixture.file.replacingOccurrences(of: ".webp", with: "")
        let iterator = try animation.makeIterator()
        var index = 0
        while let frame = try iterator.next() {
            let reference = try WebPTestPaths.reference("\(stem).\(index).pam")
            let comparison = ImageComparison(frame.canvas, reference: reference)
            #expect(comparison.isMatch, "frame \(index): \(comparison)")
            index += 1
        }
        #expect(index == fixture.frames)
        #expect(ImageComparison(container.image.bitmap, reference: try WebPTestPaths.reference("\(stem).0.pam")).isMatch)
    }

    /// Downloads of an animation give one preview per completed frame, each the composited
    /// canvas, and the final image equals a one-shot decode.
    @Test(arguments: WebPAnimatedFixture.all)
    func animationPreviewsPerFrame(_ fixture: WebPAnimatedFixture) throws {
        let data = try WebPTestPaths.fixture(fixture.file)
        let decoder = try #require(ImageDecoders.WebP(partiallyDownloadedData: data.prefix(12), context: ImageDecodingContext(data: data.prefix(12), isCompleted: false)))
        var frames: [Int] = []
        let stem = fixture.file.replacingOccurrences(of: ".webp", with: "")
        // The last partial call holds every byte: every frame has had its preview.
        for end in Array(stride(from: 12, to: data.count, by: 9)) + [data.count] {
            while let preview = decoder.decodePartiallyDownloadedData(data.prefix(end)) {
                let frame = try #require(preview.userInfo[.scanNumberKey] as? Int)
                frames.append(frame)
                let reference = try WebPTestPaths.reference("\(stem).\(frame - 1).pam")
                #expect(ImageComparison(preview.image.bitmap, reference: reference).isMatch, "preview of frame \(frame)")
            }
        }
        let final = try decoder.decode(data)
        #expect(frames == Array(1...fixture.frames))
        #expect(final.image.bitmap == (try decode(data)).image.bitmap)
    }

    @Test func aFrameOutsideTheCanvasIsCorrupt() throws {
        let data = try WebPTestPaths.fixture("frame-outside.webp")
        let error = try #require(throws: ImageCodecError.self) { try decode(data) }
        #expect(error.code == .corrupt)
        #expect(error.format == .webp)
        #expect(error.message.contains("outside the 40×30 canvas"), "\(error)")
    }

    // MARK: - Still images

    @Test func metadataIsKept() throws {
        let container = try decode(try WebPTestPaths.fixture("metadata.webp"))
        let image = container.image
        #expect(image.orientation == .right)
        #expect(image.exif?.starts(with: Array("II*".utf8)) == true)
        #expect((image.iccProfile?.count ?? 0) > 100)
        let xmp = try #require(image.xmp)
        #expect(String(decoding: xmp, as: UTF8.self).contains("x:xmpmeta"))
    }

    /// Previews report growing row counts; the last preview and the final image agree.
    @Test func stillPreviewsGrowRowByRow() throws {
        let data = try WebPTestPaths.fixture("tall-odd.webp")
        let decoder = try #require(ImageDecoders.WebP(partiallyDownloadedData: data.prefix(30), context: ImageDecodingContext(data: data.prefix(30), isCompleted: false)))
        var rows: [Int] = []
        var held: [ImageContainer] = []  // held previews must not change as decoding goes on
        for end in stride(from: 30, to: data.count, by: 40) {
            if let preview = decoder.decodePartiallyDownloadedData(data.prefix(end)) {
                rows.append(try #require(preview.userInfo[.rowCountKey] as? Int))
                held.append(preview)
            }
        }
        let final = try decoder.decode(data)
        #expect(rows.count >= 3, "\(rows)")
        #expect(rows == rows.sorted() && Set(rows).count == rows.count, "\(rows)")
        for (preview, count) in zip(held, rows) {
            // The decoded rows equal the final image's; the rows below are still zero.
            let bytesPerRow = final.image.bitmap.bytesPerRow
            let decoded = preview.image.bitmap.packedBytes
            let complete = final.image.bitmap.packedBytes
            #expect(decoded[..<(count * bytesPerRow)] == complete[..<(count * bytesPerRow)])
            #expect(decoded[(count * bytesPerRow)...].allSatisfy { $0 == 0 })
        }
    }

    @Test func premultipliedOnRequest() throws {
        let data = try WebPTestPaths.fixture("lossy-alpha.webp")
        let straight = try decode(data).image.bitmap
        let premultiplied = try decode(data) { $0.prefersPremultipliedAlpha = true }.image.bitmap
        #expect(straight.alphaMode == .straight)
        #expect(premultiplied.alphaMode == .premultiplied)
        // libwebp premultiplies while decoding; the core's premultiplication may round differently.
        let expected = straight.premultiplied().packedBytes, actual = premultiplied.packedBytes
        #expect(expected.count == actual.count)
        let largest = zip(expected, actual).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(largest <= 1, "largest difference \(largest)")
        #expect(expected != straight.packedBytes, "the fixture has partial alpha")
    }

    /// Opaque images go through libwebp's scaler for the integer reduction, then the core's
    /// resampler; the result is close to the full decode resampled.
    @Test(arguments: [("lossy-q20-m6.webp", 8, 8), ("lossy.webp", 16, 16), ("lossy-alpha.webp", 12, 12), ("tall-odd.webp", 5, 40)])
    func decodeToSize(_ name: String, _ width: Int, _ height: Int) throws {
        let data = try WebPTestPaths.fixture(name)
        let full = try decode(data).image.bitmap
        let target = ImageSize(width: width, height: height)
        let scaled = try decode(data) {
            $0.targetSize = target
            $0.contentMode = .aspectFit
        }
        let expected = full.resized(toFit: target, contentMode: .aspectFit)
        let bitmap = scaled.image.bitmap
        #expect(bitmap.width == expected.width && bitmap.height == expected.height)
        #expect(scaled.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: full.width, height: full.height))
        let comparison = ImageComparison(bitmap, reference: expected, tolerance: .init(maxDifference: 255, minimumPSNR: 30))
        #expect(comparison.isMatch, "\(comparison)")
        if full.pixelFormat.hasAlpha {
            #expect(bitmap == expected, "images with alpha are resampled from the full decode")
        }
    }

    /// With `prefersFastScaling`, an opaque WebP goes through libwebp's scaler straight to the
    /// target size: exactly `dwebp -scale`'s pixels, one-shot and read in 7-byte pieces.
    @Test(arguments: WebPScaledReference.all)
    func fastScalingEqualsLibwebpsScaler(_ scaled: WebPScaledReference) throws {
        let data = try WebPTestPaths.fixture(scaled.file)
        let reference = try WebPTestPaths.reference(scaled.reference)
        #expect(reference.width == scaled.size.width && reference.height == scaled.size.height)
        let configure: (inout ImageDecodingContext) -> Void = {
            $0.targetSize = scaled.target
            $0.contentMode = .aspectFit
            $0.prefersFastScaling = true
        }
        let container = try decode(data, configure: configure)
        #expect(container.image.bitmap == reference, "one-shot decode differs from dwebp -scale")
        #expect(container.userInfo[.decodeScaleKey] as? Double == Double(scaled.size.width) / Double(try decode(data).image.width))
        var offset = 32
        var context = ImageDecodingContext(data: data.prefix(offset), isCompleted: false)
        configure(&context)
        let pieces = try ImageDecoderRegistry.shared.decode(context, reading: {
            guard offset < data.count else { return nil }
            let end = min(offset + 7, data.count)
            defer { offset = end }
            return data.subdata(in: offset..<end)
        })
        #expect(pieces.image.bitmap == reference, "decode read in 7-byte pieces differs from dwebp -scale")
        // The default path keeps the core's resampler for the last factor: not libwebp's pixels.
        let quality = try decode(data) {
            $0.targetSize = scaled.target
            $0.contentMode = .aspectFit
        }
        #expect(quality.image.bitmap.width == reference.width && quality.image.bitmap.height == reference.height)
    }

    // MARK: - Limits and errors

    @Test func limitsAreCheckedBeforeDecoding() throws {
        let data = try WebPTestPaths.fixture("lossy.webp")
        let error = try #require(throws: ImageCodecError.self) {
            try decode(data) { $0.limits = ImageLimits(maxPixelCount: 1000) }
        }
        #expect(error.code == .limitExceeded)
        #expect(error.format == .webp)
        let animated = try WebPTestPaths.fixture("anim-img2webp.webp")
        let frames = try #require(throws: ImageCodecError.self) {
            try decode(animated) { $0.limits = ImageLimits(maxFrameCount: 2) }
        }
        #expect(frames.code == .limitExceeded)
        #expect(frames.message.contains("frames"), "\(frames)")
    }

    /// A 200-byte animated WebP declaring a 16384 × 16384 canvas fails at the header under the
    /// untrusted preset, before any pixel memory.
    @Test func hugeCanvasBomb() throws {
        var data = Data("RIFF".utf8) + Data(count: 4) + Data("WEBPVP8X".utf8)
        data += [10, 0, 0, 0, 0x12, 0, 0, 0] + [0xFF, 0x3F, 0x00, 0xFF, 0x3F, 0x00]
        data += Data("ANIM".utf8) + [6, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        data += Data(count: 160)
        let size = UInt32(data.count - 8)
        data.replaceSubrange(4..<8, with: withUnsafeBytes(of: size.littleEndian) { Data($0) })
        let error = try #require(throws: ImageCodecError.self) { try decode(data) { $0.limits = .untrusted } }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("16384×16384"), "\(error)")
    }

    @Test func metadataLargerThanTheLimitIsRefused() throws {
        let data = try WebPTestPaths.fixture("metadata.webp")
        let error = try #require(throws: ImageCodecError.self) {
            try decode(data) { $0.limits = ImageLimits(maxMetadataBytes: 100) }
        }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("ICCP chunk"), "\(error)")
    }

    @Test func truncatedDataIsIncompleteNamingTheFormat() throws {
        let error = try #require(throws: ImageCodecError.self) { try decode(try WebPTestPaths.fixture("truncated.webp")) }
        #expect(error.code == .incomplete)
        #expect(error.format == .webp)
        #expect(error.codec?.hasPrefix("libwebp 1.") == true)
    }

    @Test func bitstreamErrorsKeepLibwebpsStatus() throws {
        var data = try WebPTestPaths.fixture("lossy.webp")
        // Corrupt the VP8 frame's start code.
        data[23] = 0
        let error = try #require(throws: ImageCodecError.self) { try decode(data) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("VP8_STATUS_BITSTREAM_ERROR"), "\(error)")
    }

    @Test func headerParsesWithoutLibwebp() throws {
        for (name, width, height) in [("lossy.webp", 67, 45), ("lossless.webp", 41, 29), ("lossy-alpha.webp", 50, 38), ("anim-img2webp.webp", 48, 32)] {
            let data = try WebPTestPaths.fixture(name)
            guard case .parsed(let header) = ImageDecoders.WebP.parseHeader(data.prefix(30)) else {
                Issue.record("\(name): no header")
                continue
            }
            #expect(header.width == width && header.height == height, "\(name)")
        }
        #expect(ImageDecoders.WebP.parseHeader(Data("RIFF".utf8)) == .needsMoreData)
        #expect(ImageDecoders.WebP.parseHeader(Data("GIF89a".utf8)) == .unavailable)
    }
}
