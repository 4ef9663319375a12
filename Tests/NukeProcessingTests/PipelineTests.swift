import Foundation
import NukeCore
import NukeJPEG
import NukeNetpbm
import NukeProcessing
import Testing

/// Processors inside the decode plan: a leading resize becomes the decode's target.
@Suite struct PipelineTests {
    static let box = ImageSize(width: 64, height: 64)

    @Test func aLeadingResizeBecomesTheDecodeTarget() {
        let context = ImageDecodingContext(data: Data())
        let fill = context.planned(for: [ImageProcessors.Resize(size: Self.box, crop: true), ImageProcessors.GaussianBlur(radius: 2)])
        #expect(fill.targetSize == Self.box && fill.contentMode == .aspectFill && fill.appliesOrientation)
        let fit = context.planned(for: [ImageProcessors.Resize(size: Self.box, contentMode: .aspectFit)])
        #expect(fit.targetSize == Self.box && fit.contentMode == .aspectFit)
        // Only the first processor sees the decoded image: a resize after a blur is not planned.
        let later = context.planned(for: [ImageProcessors.GaussianBlur(radius: 2), ImageProcessors.Resize(size: Self.box)])
        #expect(later.targetSize == nil)
        // Rotations and flips before the resize only move pixels: a quarter turn turns the box.
        let turned = context.planned(for: [ImageProcessors.Rotate(degrees: 90), ImageProcessors.Flip(.vertical), ImageProcessors.Resize(size: ImageSize(width: 64, height: 32), crop: true)])
        #expect(turned.targetSize == ImageSize(width: 32, height: 64))
        let half = context.planned(for: [ImageProcessors.Rotate(degrees: 180), ImageProcessors.Resize(size: ImageSize(width: 64, height: 32))])
        #expect(half.targetSize == ImageSize(width: 64, height: 32))
        // A caller's own target size is kept.
        var sized = context
        sized.targetSize = ImageSize(width: 500, height: 500)
        #expect(sized.planned(for: [ImageProcessors.Resize(size: Self.box)]).targetSize == ImageSize(width: 500, height: 500))
    }

    /// A 400 × 300 JPEG filled to 64 × 64: libjpeg decodes at 4/8 (200 × 150 covers twice the
    /// 85 × 64 fill), the resampler finishes, the resize crops. Against `ImageOps.fit` of the full
    /// decode, by PSNR for the reasons in ResizeTests, plus JPEG's DCT scaling (26 dB).
    @Test func jpegFillDecodesReducedThenCrops() throws {
        let data = try ProcessingFixtures.data("source.jpg")
        let registry = ImageDecoderRegistry.shared
        let container = try registry.decode(registry.makeContext(for: data), processors: [ImageProcessors.Resize(size: Self.box, crop: true)])
        let bitmap = container.image.bitmap
        #expect((bitmap.width, bitmap.height) == (64, 64))
        let scale = try #require(container.userInfo[.decodeScaleKey] as? Double)
        #expect(scale < 1, "decoded at full size")
        #expect(container.userInfo[.originalSizeKey] as? ImageSize == ImageSize(width: 400, height: 300))
        let psnr = try #require(ProcessingFixtures.psnr(bitmap, try ProcessingFixtures.bitmap("fit-jpeg-64x64.pam")))
        #expect(psnr >= 26, "PSNR \(psnr) dB against ImageOps.fit")
    }

    @Test func processorsRunInOrderAfterTheDecode() throws {
        let data = try ProcessingFixtures.data("source.jpg")
        let registry = ImageDecoderRegistry.shared
        let processors: [any ImageProcessing] = [ImageProcessors.Resize(size: Self.box, crop: true), ImageProcessors.Rotate(degrees: 90), ImageProcessors.Circle()]
        let processed = try registry.decode(registry.makeContext(for: data), processors: processors).image.bitmap
        var context = registry.makeContext(for: data)
        context.targetSize = Self.box
        context.contentMode = .aspectFill
        let decoded = try registry.decode(context).image.bitmap
        let manual = try ImageProcessors.Composition(processors).process(decoded)
        #expect(processed == manual)
        #expect(processed.pixelFormat == .rgba8 && processed.width == 64)
    }

    /// A rotation before a fill: decoded to the turned box, then turned and cut to the box.
    @Test func aRotationBeforeAFillIsPlannedToo() throws {
        let data = try ProcessingFixtures.data("source.jpg")
        let registry = ImageDecoderRegistry.shared
        let processors: [any ImageProcessing] = [ImageProcessors.Rotate(degrees: 90), ImageProcessors.Resize(size: ImageSize(width: 40, height: 64), crop: true)]
        let container = try registry.decode(registry.makeContext(for: data), processors: processors)
        #expect((container.image.width, container.image.height) == (40, 64))
        #expect((container.userInfo[.decodeScaleKey] as? Double ?? 1) < 1, "decoded at full size")
        var context = registry.makeContext(for: data)
        context.targetSize = ImageSize(width: 64, height: 40)
        context.contentMode = .aspectFill
        let manual = try ImageProcessors.Composition(processors).process(try registry.decode(context).image.bitmap)
        #expect(container.image.bitmap == manual)
    }

    @Test func aFailingProcessorThrows() throws {
        let data = try ProcessingFixtures.data("source.jpg")
        let registry = ImageDecoderRegistry.shared
        #expect(throws: ImageCodecError.self) {
            try registry.decode(registry.makeContext(for: data), processors: [ImageProcessors.Crop(rect: ImageRect(x: 390, y: 0, width: 20, height: 20))])
        }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try registry.decode(registry.makeContext(for: data), processors: [ImageProcessors.Anonymous(id: "refuse") { _ in throw Refused() }])
        }
    }

    /// Without a colour manager linked, a conversion says so instead of returning unconverted
    /// pixels; with one (NukeColor, when the test bundle links every target), untagged pixels
    /// converted to sRGB are unchanged.
    @Test func colorConversionNeedsAManager() throws {
        let bitmap = try ProcessingFixtures.bitmap("source-small.pam")
        if ImageColorManagement.current == nil {
            #expect(throws: ImageCodecError.self) { try ImageProcessors.ColorConversion(to: .sRGB).process(bitmap) }
        } else {
            #expect(try ImageProcessors.ColorConversion(to: .sRGB).process(bitmap) == bitmap)
        }
    }

    /// Processors see the image upright: a crop of the top-left corner of each EXIF orientation
    /// is that corner of Pillow's `exif_transpose` of djpeg's decode (Fixtures/output), exactly;
    /// and a fill's box is for the image as displayed.
    @Test(arguments: 1...8)
    func processorsSeeTheImageUpright(orientation: Int) throws {
        let root = ProcessingFixtures.folder.deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("jpeg/exif-orientation-\(orientation)-be.jpg"))
        let upright = try Netpbm.decode(try Data(contentsOf: root.appendingPathComponent("output/upright-\(orientation).pam")))
        let registry = ImageDecoderRegistry.shared
        let corner = ImageProcessors.Crop(rect: ImageRect(x: 0, y: 0, width: 12, height: 9))
        let cropped = try registry.decode(registry.makeContext(for: data), processors: [corner]).image.bitmap
        #expect(cropped == (try corner.process(upright)))
        let filled = try registry.decode(registry.makeContext(for: data), processors: [ImageProcessors.Resize(size: ImageSize(width: 20, height: 8), crop: true)])
        #expect((filled.image.width, filled.image.height) == (20, 8))
    }
}
