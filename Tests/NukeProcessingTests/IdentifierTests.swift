import Foundation
import NukeCore
import NukeProcessing
import Testing

/// Identifiers key caches: stable across releases (the exact strings), distinct for different
/// parameters, equal for equal ones.
@Suite struct IdentifierTests {
    static let box = ImageSize(width: 256, height: 256)

    @Test func identifiersAreStable() {
        #expect(ImageProcessors.Resize(size: Self.box, crop: true).identifier == "com.github.kean/nuke/resize?s=256x256,cm=aspectFill,crop=true,upscale=false")
        #expect(ImageProcessors.Resize(width: 100).identifier == "com.github.kean/nuke/resize?s=100xauto,cm=aspectFit,crop=false,upscale=false")
        #expect(ImageProcessors.GaussianBlur(radius: 4).identifier == "com.github.kean/nuke/gaussian_blur?radius=4.0")
        #expect(ImageProcessors.Rotate(degrees: -90).identifier == "com.github.kean/nuke/rotate?degrees=270")
        #expect(ImageProcessors.Circle().identifier == "com.github.kean/nuke/circle?border=nil")
        #expect(ImageProcessors.Flatten(color: .white).identifier == "com.github.kean/nuke/flatten?color=#ffffff")
        #expect(ImageProcessors.Anonymous(id: "a") { $0 }.identifier == "a")
        #expect(ImageProcessors.ColorConversion(to: .sRGB).identifier == "nukecodecs/color?to=srgb,from=none")
        // Profiles by size and FNV-1a digest, the same in every process.
        #expect(ImageProcessors.ColorConversion(to: .profile(Data("abc".utf8))).identifier == "nukecodecs/color?to=icc:3:e71fa2190541574b,from=none")
    }

    @Test func differentParametersHaveDifferentIdentifiers() {
        let border = ImageProcessingOptions.Border(color: .black, width: 2)
        let processors: [any ImageProcessing] = [
            ImageProcessors.Resize(size: Self.box), ImageProcessors.Resize(size: Self.box, crop: true),
            ImageProcessors.Resize(size: Self.box, contentMode: .aspectFit), ImageProcessors.Resize(size: Self.box, upscale: true),
            ImageProcessors.Resize(size: ImageSize(width: 256, height: 128)), ImageProcessors.Resize(width: 256), ImageProcessors.Resize(height: 256),
            ImageProcessors.Crop(size: Self.box), ImageProcessors.Crop(size: Self.box, gravity: .entropy),
            ImageProcessors.Crop(rect: ImageRect(x: 0, y: 0, width: 256, height: 256)),
            ImageProcessors.Rotate(degrees: 90), ImageProcessors.Rotate(degrees: 180), ImageProcessors.Flip(.horizontal), ImageProcessors.Flip(.vertical),
            ImageProcessors.RoundedCorners(radius: 8), ImageProcessors.RoundedCorners(radius: 8, border: border), ImageProcessors.RoundedCorners(radius: 9),
            ImageProcessors.Circle(), ImageProcessors.Circle(border: border),
            ImageProcessors.GaussianBlur(radius: 4), ImageProcessors.GaussianBlur(radius: 4.5),
            ImageProcessors.Flatten(color: .white), ImageProcessors.Flatten(color: .black),
            ImageProcessors.Anonymous(id: "x") { $0 },
            ImageProcessors.Composition([ImageProcessors.Flip(.vertical), ImageProcessors.GaussianBlur(radius: 4)]),
        ]
        let identifiers = processors.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count, "\(identifiers)")
        #expect(Set(processors.map(\.hashableIdentifier)).count == processors.count)
    }

    @Test func equalProcessorsHaveEqualIdentifiers() {
        let a = ImageProcessors.Composition([ImageProcessors.Resize(size: Self.box, crop: true), ImageProcessors.GaussianBlur(radius: 4)])
        let b = ImageProcessors.Composition([ImageProcessors.Composition([ImageProcessors.Resize(size: Self.box, crop: true)]), ImageProcessors.GaussianBlur(radius: 4)])
        #expect(a.identifier == b.identifier)
        #expect(a.hashableIdentifier == b.hashableIdentifier)
        #expect(a.processors.count == 2)
        #expect(ImageProcessors.Rotate(degrees: 450).hashableIdentifier == ImageProcessors.Rotate(degrees: 90).hashableIdentifier)
    }
}
