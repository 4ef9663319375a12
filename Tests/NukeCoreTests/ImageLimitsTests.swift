import Testing
import Foundation
@testable import NukeCore

struct ImageLimitsTests {
    @Test func acceptsWithinLimits() throws {
        try ImageLimits.default.check(width: 14_204, height: 10_652, bytesPerPixel: 4, format: .jpeg, codec: nil)
        try ImageLimits(maxPixelCount: 100).check(width: 10, height: 10, bytesPerPixel: 4, format: nil, codec: nil)
    }

    @Test func rejectsPixelCount() {
        #expect(throws: ImageCodecError.self) {
            try ImageLimits(maxPixelCount: 99).check(width: 10, height: 10, bytesPerPixel: 1, format: .png, codec: "libpng")
        }
        do {
            try ImageLimits.default.check(width: 20_000, height: 20_000, bytesPerPixel: 4, format: .png, codec: "libpng 1.6.39")
            Issue.record("expected a limit error")
        } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.stage == .header)
            #expect(error.format == .png)
            #expect(error.description.contains("PNG"))
            #expect(error.description.contains("20000×20000"))
        }
    }

    @Test func rejectsDimensionAndBytesAndFrames() {
        #expect(throws: ImageCodecError.self) {
            try ImageLimits(maxDimension: 100).check(width: 101, height: 1, bytesPerPixel: 4, format: nil, codec: nil)
        }
        #expect(throws: ImageCodecError.self) {
            try ImageLimits(maxDecodedBytes: 399).check(width: 10, height: 10, bytesPerPixel: 4, format: nil, codec: nil)
        }
        #expect(throws: ImageCodecError.self) {
            try ImageLimits(maxFrameCount: 2).check(width: 1, height: 1, bytesPerPixel: 4, frameCount: 3, format: nil, codec: nil)
        }
    }

    @Test func zeroSizeIsCorruptAndOverflowIsALimit() throws {
        let zero = #expect(throws: ImageCodecError.self) {
            try ImageLimits.unlimited.check(width: 0, height: 10, bytesPerPixel: 4, format: nil, codec: nil)
        }
        #expect(zero?.code == .corrupt)
        let huge = #expect(throws: ImageCodecError.self) {
            try ImageLimits.unlimited.check(width: .max / 2, height: .max / 2, bytesPerPixel: 4, format: nil, codec: nil)
        }
        #expect(huge?.code == .limitExceeded)
    }

    /// A codec's own limit takes its value from the preset unless set.
    /// What a decoder returns is held to the metadata limit too, whatever the decoder checked.
    @Test(arguments: ["icc", "exif", "xmp"])
    func returnedMetadataOverTheLimitIsRefused(_ field: String) throws {
        var image = Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [0]))
        let big = Data(count: 2_000)
        switch field {
        case "icc": image.colorInfo.iccProfile = big
        case "exif": image.exif = big
        default: image.xmp = big
        }
        var context = ImageDecodingContext(data: Data())
        context.limits.maxMetadataBytes = 2_000
        try context.checkLimits(of: ImageContainer(image: image, type: .png))
        context.limits.maxMetadataBytes = 1_999
        let error = try #require(throws: ImageCodecError.self) { try context.checkLimits(of: ImageContainer(image: image, type: .png)) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("2000 bytes"), "\(error)")
    }

    @Test func codecLimitsFollowThePresetUnlessSet() {
        let key = ImageLimits.Key(name: "test-elements", defaultValue: 10, untrustedValue: 3)
        #expect(ImageLimits.default[key] == 10)
        #expect(ImageLimits(maxPixelCount: 5)[key] == 10)
        #expect(ImageLimits.untrusted[key] == 3)
        #expect(ImageLimits.unlimited[key] == .max)
        var limits = ImageLimits.untrusted
        limits[key] = 7
        #expect(limits[key] == 7)
        #expect(limits.codecValues == ["test-elements": 7])
        #expect(limits != ImageLimits.untrusted)
    }
}
