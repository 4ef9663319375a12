import NukeCore
import NukePixels
import NukeProcessing
import Testing

@Suite struct ResizeTests {
    /// A fill with crop against Pillow's `ImageOps.fit`. Both cover the box and cut the centre,
    /// but Pillow crops the source (at a fractional offset) and resizes the crop with one bicubic
    /// pass, while the resize shrinks the whole image as a decode to size does (box reduction,
    /// then bicubic) and crops whole pixels: up to half a pixel of shift on this pattern's
    /// checkerboard, so the comparison is by PSNR — over 26 dB (a different crop, or a fit instead
    /// of a fill, scores 12–16 dB).
    @Test(arguments: [(48, 48, "fit-48x48.pam"), (50, 20, "fit-50x20.pam")])
    func fillWithCropMatchesImageOpsFit(width: Int, height: Int, reference: String) throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        let resize = ImageProcessors.Resize(size: ImageSize(width: width, height: height), contentMode: .aspectFill, crop: true)
        let filled = try resize.process(source)
        #expect(filled.width == width && filled.height == height)
        let psnr = try #require(ProcessingFixtures.psnr(filled, try ProcessingFixtures.bitmap(reference)))
        #expect(psnr >= 26, "PSNR \(psnr) dB against ImageOps.fit")
    }

    @Test func aShiftedCropScoresBelowTheThreshold() throws {
        // The threshold above can fail: the same fill cut at the left edge instead of the centre.
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        let covered = try ImageProcessors.Resize(size: ImageSize(width: 48, height: 48)).process(source)  // 72 × 48
        let left = try ImageProcessors.Crop(size: ImageSize(width: 48, height: 48), gravity: .left).process(covered)
        let psnr = try #require(ProcessingFixtures.psnr(left, try ProcessingFixtures.bitmap("fit-48x48.pam")))
        #expect(psnr < 26)
    }

    @Test func fitAndFillSizes() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")  // 120 × 80
        let box = ImageSize(width: 60, height: 60)
        let fit = try ImageProcessors.Resize(size: box, contentMode: .aspectFit).process(source)
        #expect((fit.width, fit.height) == (60, 40))
        let fill = try ImageProcessors.Resize(size: box).process(source)
        #expect((fill.width, fill.height) == (90, 60))
        // A fill without crop is the decode's resize: NukePixels' resampler at the same size.
        #expect(fill == source.resized(toFit: box, contentMode: .aspectFill))
        let width = try ImageProcessors.Resize(width: 30).process(source)
        #expect((width.width, width.height) == (30, 20))
        let height = try ImageProcessors.Resize(height: 20).process(source)
        #expect((height.width, height.height) == (30, 20))
    }

    @Test func noUpscalingByDefault() throws {
        let source = try ProcessingFixtures.bitmap("source-small.pam")  // 60 × 40
        let box = ImageSize(width: 90, height: 90)
        #expect(try ImageProcessors.Resize(size: box, contentMode: .aspectFit).process(source) == source)
        // A fill with crop of a smaller image cuts only what is larger than the box.
        let cropped = try ImageProcessors.Resize(size: ImageSize(width: 30, height: 90), crop: true).process(source)
        #expect((cropped.width, cropped.height) == (30, 40))
    }

    /// Upscaling is Pillow's BICUBIC, its intermediate clamped as Pillow's is; Pillow also rounds
    /// that intermediate to 8 bits and uses fixed-point weights where this stays in Float, so
    /// samples may differ by a level or two, never more than 2 (without the clamp: 10).
    @Test func upscaleMatchesPillowsBicubic() throws {
        let source = try ProcessingFixtures.bitmap("source-small.pam")
        let upscaled = try ImageProcessors.Resize(size: ImageSize(width: 90, height: 60), contentMode: .aspectFit, upscale: true).process(source)
        let difference = try #require(ProcessingFixtures.maxDifference(upscaled, try ProcessingFixtures.bitmap("upscale-90x60.pam")))
        #expect(difference <= 2, "max difference \(difference) from Pillow's BICUBIC")
    }

    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .grayAlpha16, .rgb16, .rgba16])
    func everyFormatResizesAndUpscales(format: PixelFormat) throws {
        let source = try ProcessingFixtures.bitmap("source-small.pam").converted(to: format)
        let down = try ImageProcessors.Resize(size: ImageSize(width: 20, height: 20), crop: true).process(source)
        #expect(down.pixelFormat == format && down.width == 20 && down.height == 20)
        let up = try ImageProcessors.Resize(size: ImageSize(width: 120, height: 120), contentMode: .aspectFit, upscale: true).process(source)
        #expect(up.pixelFormat == format && up.width == 120 && up.height == 80)
    }
}
