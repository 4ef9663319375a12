import Foundation
import NukeConformance
import NukeCore
import NukeHEIF
import NukePixels
import NukeNetpbm
import Testing

/// A HEIC turned by irot with an EXIF Orientation 6 beside it, as phones write it, made with
/// libheif's encoder option (scripts/make-heif-orientation-fixture.py): the pixels are turned once.
@Suite struct HEIFOrientationTests {
    static let output = HEIFTestPaths.repositoryRoot.appendingPathComponent("Fixtures/output")

    static func decode(appliesOrientation: Bool) throws -> ImageContainer {
        let data = try Data(contentsOf: output.appendingPathComponent("irot-6.heic"))
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.appliesOrientation = appliesOrientation
        return try ImageDecoderRegistry.shared.decode(context)
    }

    /// libheif applies irot (37×23 stored, 23×37 shown, as heif-convert decodes it); the image is
    /// upright and its EXIF block says so, with or without `appliesOrientation`.
    @Test(arguments: [false, true])
    func irotIsAppliedOnce(_ appliesOrientation: Bool) throws {
        let container = try Self.decode(appliesOrientation: appliesOrientation)
        let image = container.image
        #expect(image.width == 23 && image.height == 37, "\(image.width)×\(image.height)")
        #expect(image.orientation == .up)
        #expect(container.userInfo[.appliedOrientationKey] == nil)
        let block = try #require(image.exif.flatMap(ExifBlock.init))
        #expect(block.orientation == .up, "the EXIF block's 6 would turn the upright pixels again")
        let reference = try Netpbm.decode(try Data(contentsOf: Self.output.appendingPathComponent("irot-6.pam")))
        let comparison = ImageComparison(image.bitmap.converted(to: .rgb8), reference: reference, tolerance: .minimumPSNR(40))
        #expect(comparison.isMatch, "\(comparison)")
    }
}
