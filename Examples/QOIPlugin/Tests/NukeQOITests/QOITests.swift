import Foundation
import NukeConformance
import NukeCore
import NukeQOI
import Testing

enum QOIConformance {
    static let plan = ConformancePlan(codec: .qoi, format: "qoi", testFile: #filePath, corpusExtensions: ["qoi"])

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fixtures/qoi/\(name)").standardizedFileURL)
    }
}

/// The kit's standard cases: reference decodes against Pillow, truncation, corruption, limits,
/// progressive feeding, round trips, decode to size, cancellation, final verdicts.
@Suite struct QOIConformanceTests {
    @Test(arguments: QOIConformance.plan.cases)
    func conformance(_ check: ConformanceCase) async {
        let result = await QOIConformance.plan.run(check)
        #expect(result.passed, "\(result)")
    }
}

/// What the core gives the plugin, which wrote none of it, on its own decoder called directly.
@Suite struct WhatTheCoreGivesTests {
    @Test func aHugeDeclaredSizeIsRefusedBeforeAllocating() throws {
        let data = try QOIConformance.data("bad-huge-dimensions.qoi")
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoders.QOI().decode(data) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.format == .qoi)
    }

    @Test func limitsApplyToTheDecoderCalledDirectly() throws {
        let data = try QOIConformance.data("gradient-rgb.qoi")   // 40 × 30
        var limits = ImageLimits.default
        limits.maxPixelCount = 40 * 30 - 1
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoders.QOI(limits: limits).decode(data) }
        #expect(error?.code == .limitExceeded)
        limits.maxPixelCount = 40 * 30
        #expect(try ImageDecoders.QOI(limits: limits).decode(data).image.width == 40)
    }

    @Test func decodesToTheTargetSize() throws {
        let data = try QOIConformance.data("gradient-rgb.qoi")
        let context = ImageDecodingContext(data: data, targetSize: ImageSize(width: 10, height: 10), contentMode: .aspectFit)
        let container = try ImageDecoders.QOI(context: context).decode(data)
        #expect(container.image.width == 10 && container.image.height == 8)
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 40, height: 30))
    }

    @Test func aCancelledDecodeEndsWithoutAnImage() throws {
        let data = try QOIConformance.data("gradient-rgb.qoi")
        let token = ImageDecodingCancellation()
        token.cancel()
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoders.QOI(cancellation: token).decode(data) }
        #expect(error?.code == .cancelled)
    }

    @Test func theSharedRegistryKnowsQOIFromItsRecord() throws {
        let data = try QOIConformance.data("alpha-rgba.qoi")
        #expect(ImageDecoderRegistry.shared.registeredCodecs.contains { $0.name == "NukeQOI" })
        #expect(ImageType(data) == .qoi)
        #expect(try ImageDecoderRegistry.shared.decode(data).image.bitmap.pixelFormat == .rgba8)
    }
}
