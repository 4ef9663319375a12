import Foundation
import NukeColor
import NukeCore
import NukeJPEG
import NukePixels
import NukePNG
@testable import NukeProcessing
import Testing

/// The output stage in the decode plan: leading processors that only move pixels run with the
/// orientation as one copy, the colour is converted on the pixels kept, and the output is the
/// same, pixel for pixel, as every step run on its own, in order.
@Suite struct OutputStageInThePlanTests {
    /// A `width × height` bitmap of `format` whose every sample differs from its neighbours'.
    static func numbered(width: Int, height: Int, format: PixelFormat) -> Bitmap {
        Bitmap(width: width, height: height, pixelFormat: format) { out in
            for index in out.indices { out[index] = UInt8(truncatingIfNeeded: index &* 37 &+ index / 7) }
        }
    }

    /// Sequences of processors on a 7 × 5 image as displayed: crops by rectangle and by gravity,
    /// turns and flips, a resize that only crops, per-pixel steps between them, and processors
    /// that stop the moves (an entropy crop, a resize that resamples, a blur).
    static let sequences: [(name: String, processors: [any ImageProcessing], folds: Bool)] = [
        ("crop", [ImageProcessors.Crop(rect: ImageRect(x: 1, y: 1, width: 3, height: 2))], true),
        ("rotate 90", [ImageProcessors.Rotate(degrees: 90)], true),
        ("flip, crop at the bottom", [ImageProcessors.Flip(.horizontal), ImageProcessors.Crop(size: ImageSize(width: 3, height: 2), gravity: .bottom)], true),
        ("turns, flips and crops", [
            ImageProcessors.Rotate(degrees: 270), ImageProcessors.Crop(rect: ImageRect(x: 1, y: 2, width: 3, height: 4)),
            ImageProcessors.Flip(.vertical), ImageProcessors.Rotate(degrees: 180),
            ImageProcessors.Crop(size: ImageSize(width: 2, height: 3), gravity: .right), ImageProcessors.Rotate(degrees: 90),
        ], true),
        ("a fill that only crops", [ImageProcessors.Resize(size: ImageSize(width: 5, height: 5), crop: true), ImageProcessors.Rotate(degrees: 90)], true),
        ("flatten between crops", [
            ImageProcessors.Crop(rect: ImageRect(x: 0, y: 1, width: 6, height: 3)),
            ImageProcessors.Flatten(color: RGBColor(red: 10, green: 200, blue: 30)),
            ImageProcessors.Rotate(degrees: 90), ImageProcessors.Crop(size: ImageSize(width: 2, height: 2), gravity: .top),
        ], true),
        ("entropy crop", [ImageProcessors.Flip(.vertical), ImageProcessors.Crop(size: ImageSize(width: 3, height: 3), gravity: .entropy), ImageProcessors.Rotate(degrees: 90)], false),
        ("resample", [ImageProcessors.Rotate(degrees: 90), ImageProcessors.Resize(size: ImageSize(width: 3, height: 3), crop: true)], false),
        ("blur first", [ImageProcessors.GaussianBlur(radius: 1), ImageProcessors.Crop(rect: ImageRect(x: 1, y: 1, width: 3, height: 2))], false),
    ]

    @Test(arguments: ImageOrientation.allCases)
    func movesWithTheOrientationAreTheStepsInOrder(_ orientation: ImageOrientation) throws {
        for format in [PixelFormat.rgba8, .rgb8, .gray8] {
            // Stored 5 × 7 for orientations that turn it, so the displayed image is always 7 × 5.
            let stored = orientation.swapsDimensions ? Self.numbered(width: 5, height: 7, format: format) : Self.numbered(width: 7, height: 5, format: format)
            for (name, processors, folds) in Self.sequences {
                let expected = try ImageProcessors.Composition(processors).process(stored.oriented(orientation))
                let (moves, rest) = PixelMoves.fold(storedSize: ImageSize(width: stored.width, height: stored.height),
                                                    orientation: orientation, processors: processors)
                let fused = try ImageProcessors.Composition(rest).process(moves.apply(to: stored))
                #expect(fused == expected, "\(orientation), \(format), \(name)")
                // Folded: only the per-pixel steps are left; stopped: the stopping processor is.
                if folds {
                    #expect(rest.allSatisfy { $0 is ImageProcessors.Flatten }, "\(orientation), \(name): \(rest)")
                } else {
                    #expect(!rest.isEmpty, "\(name)")
                }
            }
        }
    }

    @Test func orientationsComposeAsTheirPixelsDo() {
        let stored = Self.numbered(width: 4, height: 3, format: .gray8)
        for first in ImageOrientation.allCases {
            for second in ImageOrientation.allCases {
                let composed = PixelMoves.composed(first, then: second)
                #expect(stored.oriented(composed) == stored.oriented(first).oriented(second), "\(first) then \(second) is not \(composed)")
            }
        }
    }

    @Test func orientedWithACropIsTheCropOfTheOrientedImage() {
        let stored = Self.numbered(width: 6, height: 4, format: .rgb8)
        for orientation in ImageOrientation.allCases {
            let whole = stored.oriented(orientation)
            for rect in [ImageRect(x: 0, y: 0, width: whole.width, height: whole.height), ImageRect(x: 1, y: 2, width: 2, height: 1),
                         ImageRect(x: whole.width - 1, y: 0, width: 1, height: whole.height)] {
                #expect(stored.oriented(orientation, cropping: rect) == whole.cropped(to: rect), "\(orientation), \(rect)")
            }
        }
    }

    /// Through the registry: each EXIF orientation, an embedded ICC profile converted to sRGB,
    /// premultiplied alpha; the plan's output equals the output stage run first (as a decode
    /// without processors runs it), then each processor.
    @Test(arguments: ["jpeg/exif-orientation-2-le.jpg", "jpeg/exif-orientation-5-le.jpg", "jpeg/exif-orientation-6-be.jpg",
                      "jpeg/exif-orientation-8-le.jpg", "jpeg/icc.jpg", "png/adam7-rgba-8.png"])
    func theRegistrysPlanEqualsTheStepsInOrder(_ path: String) throws {
        let data = try Data(contentsOf: ProcessingFixtures.folder.deletingLastPathComponent().appendingPathComponent(path))
        let registry = ImageDecoderRegistry.shared
        let processors: [[any ImageProcessing]] = [
            [ImageProcessors.Resize(size: ImageSize(width: 16, height: 16), crop: true), ImageProcessors.Rotate(degrees: 90),
             ImageProcessors.Crop(size: ImageSize(width: 12, height: 9), gravity: .top)],
            [ImageProcessors.Flip(.horizontal), ImageProcessors.Resize(size: ImageSize(width: 20, height: 8), crop: true),
             ImageProcessors.Flatten(color: RGBColor(red: 255, green: 255, blue: 255)), ImageProcessors.RoundedCorners(radius: 3)],
            [ImageProcessors.Crop(rect: ImageRect(x: 2, y: 3, width: 10, height: 11)), ImageProcessors.Rotate(degrees: -90)],
        ]
        for steps in processors {
            var context = registry.makeContext(for: data)
            context.colorConversion = .sRGB
            context.prefersPremultipliedAlpha = path.hasSuffix(".png")
            let planned = try registry.decode(context, processors: steps)
            let decoded = try registry.decode(context.planned(for: steps))
            let expected = try ImageProcessors.Composition(steps).process(decoded, context: ImageProcessingContext(decodingContext: context, isCompleted: true))
            #expect(planned.image.bitmap == expected.image.bitmap, "\(path), \(steps)")
            #expect(planned.image.orientation == .up)
            #expect(planned.userInfo[.appliedOrientationKey] as? ImageOrientation == expected.userInfo[.appliedOrientationKey] as? ImageOrientation)
            #expect(planned.userInfo[.colorConversionKey] as? String == expected.userInfo[.colorConversionKey] as? String, "\(path)")
            #expect(planned.userInfo[.colorConversionKey] != nil)
            #expect(planned.image.colorInfo == expected.image.colorInfo)
        }
    }
}
