import Foundation
import Testing
@testable import NukeCore

struct ImageResamplerTests {
    // MARK: - Quality against Pillow

    /// Lowest PSNR (dB) accepted against Pillow, per fixture; measured values in the comments.
    static let pillowCases: [(name: String, minimumPSNR: Double)] = [
        ("thumbnail-rgb-64", 40),
        ("thumbnail-rgb-32", 40),
        ("thumbnail-rgb-100", 40),
        ("thumbnail-rgba-64", 40),
        ("fill-rgb-64", 40),
        ("fill-rgba-48", 40),
    ]

    @Test(arguments: pillowCases)
    func matchesPillowThumbnail(_ name: String, minimumPSNR: Double) throws {
        let manifest = try ResamplerFixtures.manifest()
        let fixture = try #require(manifest.cases.first { $0.name == name }, "no fixture \(name)")
        let source = ResamplerFixtures.photo(width: fixture.source.width, height: fixture.source.height, alpha: fixture.source.alpha)
        #expect(ResamplerFixtures.fnv1a64(source.packedBytes) == fixture.source.fnv1a64, "the Swift test pattern differs from the script's")
        let mode: ImageDecodingContext.ContentMode = fixture.contentMode == "aspectFill" ? .aspectFill : .aspectFit
        let size = ImageResampler.targetSize(
            for: ImageSize(width: source.width, height: source.height),
            fitting: ImageSize(width: fixture.target.width, height: fixture.target.height), contentMode: mode
        )
        #expect(size == ImageSize(width: fixture.referenceSize.width, height: fixture.referenceSize.height))
        let reference = try ResamplerFixtures.readPAM(fixture.reference)
        let resized = source.resized(to: size)
        try #require(resized.width == reference.width && resized.height == reference.height)
        let psnr = ResamplerFixtures.psnr(resized, reference, premultiplied: true)
        let straight = ResamplerFixtures.psnr(resized, reference)
        print("ImageResampler vs Pillow \(manifest.pillow) \(name): PSNR \(psnr) dB (straight colour: \(straight) dB)")
        #expect(psnr >= minimumPSNR, "\(name): \(psnr) dB")
    }
}
