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

    /// Nuke's `unit:` parameters: points are converted to pixels at creation with their scale, so a
    /// resize to 64 points at 3× is the 192-pixel resize (the same identifier, the same output).
    @Test func pointsAreConvertedToPixelsWithTheirScale() throws {
        let points = ImageProcessors.Resize(width: 64, height: 48, unit: .points(scale: 3), crop: true)
        #expect(points == ImageProcessors.Resize(size: ImageSize(width: 192, height: 144), crop: true))
        #expect(points.identifier == "com.github.kean/nuke/resize?s=192x144,cm=aspectFill,crop=true,upscale=false")
        #expect(ImageProcessors.Resize(width: 10.4, height: 0.1, unit: .pixels) == ImageProcessors.Resize(size: ImageSize(width: 10, height: 1)))
        #expect(ImageProcessors.Resize(width: 33.5, height: 20, unit: .points(scale: 1.5)).width == 50)
        let corners = ImageProcessors.RoundedCorners(radius: 8, unit: .points(scale: 2), border: .init(color: .black, width: 1, unit: .points(scale: 2)))
        #expect(corners == ImageProcessors.RoundedCorners(radius: 16, border: .init(color: .black, width: 2)))
        #expect(ImageProcessors.RoundedCorners(radius: 8, unit: .pixels) == ImageProcessors.RoundedCorners(radius: 8))
        let bitmap = Bitmap(width: 300, height: 200, pixelFormat: .rgba8, bytes: [UInt8](repeating: 128, count: 300 * 200 * 4))
        #expect(try points.process(bitmap).width == 192)
        #expect(try points.process(bitmap).height == 144)
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
