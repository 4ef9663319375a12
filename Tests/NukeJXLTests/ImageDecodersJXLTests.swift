import Foundation
import NukeConformance
import NukeCore
import NukeJXL
import NukePixels
import Testing

@Suite struct ImageDecodersJXLTests {
    // MARK: - Pixels

    @Test func losslessEqualsTheReferenceExactly() throws {
        let image = try decodeJXL(try JXLTestPaths.fixture("lossless.jxl")).image
        #expect(image.bitmap.pixelFormat == .rgb8)
        let comparison = ImageComparison(image.bitmap, reference: try JXLTestPaths.reference("lossless.ppm"), tolerance: .maxDifference(0))
        #expect(comparison.isMatch, "\(comparison)")
    }

    @Test func lossyIsWithinOneOfDjxl() throws {
        let image = try decodeJXL(try JXLTestPaths.fixture("lossy.jxl")).image
        let comparison = ImageComparison(image.bitmap, reference: try JXLTestPaths.reference("lossy.ppm"), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
    }

    @Test func grayStaysGray() throws {
        let image = try decodeJXL(try JXLTestPaths.fixture("gray.jxl")).image
        #expect(image.bitmap.pixelFormat == .gray8)
        #expect(ImageComparison(image.bitmap, reference: try JXLTestPaths.reference("gray.pgm"), tolerance: .maxDifference(0)).isMatch)
    }

    @Test(arguments: ["sixteen", "float"])
    func highBitDepthOnRequest(_ name: String) throws {
        let data = try JXLTestPaths.fixture("\(name).jxl")
        let wide = try decodeJXL(data) { $0.prefersHighBitDepth = true }
        #expect(wide.image.bitmap.pixelFormat == .rgb16)
        let reference16 = try JXLTestPaths.reference("\(name).16.ppm")
        let comparison = ImageComparison(wide.image.bitmap, reference: reference16, tolerance: .maxDifference(name == "float" ? 257 : 0))
        #expect(comparison.isMatch, "\(comparison)")
        #expect(wide.userInfo[.jxlIsFloatKey] as? Bool == (name == "float"))
        let narrow = try decodeJXL(data).image.bitmap
        #expect(narrow.pixelFormat == .rgb8)
        #expect(ImageComparison(narrow, reference: try JXLTestPaths.reference("\(name).ppm"), tolerance: .maxDifference(1)).isMatch)
    }

    @Test func alphaIsStraightAndPremultipliedOnRequest() throws {
        let data = try JXLTestPaths.fixture("alpha.jxl")
        let straight = try decodeJXL(data).image.bitmap
        #expect(straight.pixelFormat == .rgba8)
        #expect(straight.alphaMode == .straight)
        #expect(ImageComparison(straight, reference: try JXLTestPaths.reference("alpha.pam"), tolerance: .maxDifference(0)).isMatch)
        let premultiplied = try decodeJXL(data) { $0.prefersPremultipliedAlpha = true }.image.bitmap
        #expect(premultiplied.alphaMode == .premultiplied)
        #expect(premultiplied.packedBytes == straight.premultiplied().packedBytes)
        #expect(premultiplied.packedBytes != straight.packedBytes, "the fixture has partial alpha")
    }

    // MARK: - Metadata

    @Test func anEnumColourEncodingIsReportedAsNCLX() throws {
        let container = try decodeJXL(try JXLTestPaths.fixture("lossless.jxl"))
        #expect(NCLXColor(userInfo: container.userInfo) == NCLXColor(primaries: 1, transfer: 13, matrix: 0, fullRange: true))
        #expect(container.image.colorInfo.iccProfile == nil)
    }

    @Test func anICCProfileIsReported() throws {
        let icc = try Data(contentsOf: JXLTestPaths.repositoryRoot.appendingPathComponent("Fixtures/color/display-p3.icc"))
        var image = try decodeJXL(try JXLTestPaths.fixture("lossless.jxl")).image
        image.colorInfo.iccProfile = icc
        let encoded = try ImageEncoders.JXL(options: ImageEncodingOptions(isLossless: true)).encode(image)
        let decoded = try decodeJXL(encoded)
        #expect(decoded.image.colorInfo.iccProfile == icc)
        #expect(decoded.userInfo[.nclxKey] == nil)
    }

    @Test func orientationIsReportedNotApplied() throws {
        let image = try decodeJXL(try JXLTestPaths.fixture("recompressed.jxl")).image
        #expect(image.orientation == .right)
        #expect(image.width == 48 && image.height == 32)
    }

    @Test func headerHookReadsTheSizeHeader() throws {
        for (name, width, height) in [("lossless.jxl", 48, 32), ("container.jxl", 30, 20), ("progressive.jxl", 272, 32), ("bomb.jxl", 100_000, 100_000)] {
            guard case .parsed(let header) = JXLPlugin.parseHeader(try JXLTestPaths.fixture(name)) else {
                Issue.record("\(name): no header")
                continue
            }
            #expect(header.width == width && header.height == height, "\(name): \(header)")
        }
        #expect(JXLPlugin.parseHeader(Data([0xFF, 0x0A])) == .needsMoreData)
        #expect(JXLPlugin.parseHeader(Data([0xFF, 0xD8, 0xFF])) == .unavailable)
    }

    // MARK: - Animation

    @Test func animationFramesAndDurations() throws {
        let container = try decodeJXL(try JXLTestPaths.fixture("anim.jxl"))
        let animation = try #require(container.animation)
        #expect(animation.frameCount == 3)
        #expect(animation.loopCount == 0)
        #expect(animation.frameInfos.map(\.duration) == [0.1, 0.2, 0.3])
        #expect(ImageComparison(container.image.bitmap, reference: try JXLTestPaths.reference("anim.0.pam")).isMatch)
        let iterator = try animation.makeIterator()
        var index = 0
        while let frame = try iterator.next() {
            let comparison = ImageComparison(frame.canvas, reference: try JXLTestPaths.reference("anim.\(index).pam"))
            #expect(comparison.isMatch, "frame \(index): \(comparison)")
            index += 1
        }
        #expect(index == 3)
    }

    // MARK: - Progressive

    /// Fed in 32 chunks, the decoder reports at least one pass as a preview and ends with the
    /// one-shot image.
    @Test func progressivePassesArePreviews() throws {
        let data = try JXLTestPaths.fixture("progressive.jxl")
        let decoder = ImageDecoders.JXL(context: ImageDecodingContext(data: Data(), isCompleted: false))
        var previews: [ImageContainer] = []
        let chunk = (data.count + 31) / 32
        for end in stride(from: chunk, to: data.count, by: chunk) {
            while let preview = decoder.decodePartiallyDownloadedData(data.prefix(end)) {
                #expect(preview.isPreview)
                #expect(preview.userInfo[.scanNumberKey] as? Int == previews.count + 1)
                previews.append(preview)
            }
        }
        let final = try decoder.decode(data)
        let oneShot = try decodeJXL(data)
        #expect(previews.count >= 1)
        #expect(final.image.bitmap.packedBytes == oneShot.image.bitmap.packedBytes)
        #expect(final.userInfo[.isProgressiveKey] as? Bool == true)
        let comparison = ImageComparison(final.image.bitmap, reference: try JXLTestPaths.reference("progressive.ppm"), tolerance: .maxDifference(1))
        #expect(comparison.isMatch, "\(comparison)")
    }

    // MARK: - Decode to size

    @Test func decodeToSize() throws {
        let container = try decodeJXL(try JXLTestPaths.fixture("progressive.jxl")) {
            $0.targetSize = ImageSize(width: 68, height: 68)
            $0.contentMode = .aspectFit
        }
        #expect(container.image.width == 68 && container.image.height == 8)
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 272, height: 32))
        #expect(container.userInfo[.decodeScaleKey] as? Double == 0.25)
    }

    // MARK: - Errors

    @Test func truncatedIsIncomplete() throws {
        let error = try #require(throws: ImageCodecError.self) { try decodeJXL(try JXLTestPaths.fixture("truncated.jxl")) }
        #expect(error.code == .incomplete)
        #expect(error.format == .jxl)
        #expect(error.codec?.hasPrefix("libjxl") == true)
    }

    @Test func garbageIsCorrupt() throws {
        let error = try #require(throws: ImageCodecError.self) { try decodeJXL(try JXLTestPaths.fixture("garbage.jxl")) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("JXL_DEC_ERROR"), "\(error)")
    }

    /// The shim refuses the declared size itself, at the basic info, even past the registry's
    /// header gate: straight into the plugin's incremental decoder.
    @Test func theShimRefusesAHugeSizeBeforeLibjxlAllocates() throws {
        var context = ImageDecodingContext(data: Data())
        context.limits = .untrusted
        var decoder = JXLPlugin.makeIncrementalDecoder(context: context)
        decoder.push(try JXLTestPaths.fixture("bomb.jxl"))
        decoder.finish()
        let error = try #require(throws: ImageCodecError.self) { _ = try decoder.next() }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("100000×100000"), "\(error)")
    }

    @Test func cancelledBeforeDecoding() throws {
        let token = ImageDecodingCancellation()
        token.cancel()
        let error = try #require(throws: ImageCodecError.self) {
            try decodeJXL(try JXLTestPaths.fixture("lossy.jxl")) { $0.cancellation = token }
        }
        #expect(error.code == .cancelled)
    }
}
