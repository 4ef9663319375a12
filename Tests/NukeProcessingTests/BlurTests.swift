import NukeCore
import NukeProcessing
import Testing

@Suite struct BlurTests {
    /// Pillow runs the same three extended-box passes but rounds each pass to 8 bits (six
    /// roundings, each up to 0.5) where the blur stays in Float: the outputs may differ by a
    /// couple of levels, never more than 2.
    @Test(arguments: [(2.0, "blur-2.pam"), (4.0, "blur-4.pam")])
    func blurMatchesPillowsGaussianBlur(sigma: Double, reference: String) throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        let blurred = try ImageProcessors.GaussianBlur(radius: sigma).process(source)
        let difference = try #require(ProcessingFixtures.maxDifference(blurred, try ProcessingFixtures.bitmap(reference)))
        #expect(difference <= 2, "max difference \(difference) from Pillow")
    }

    /// Against scipy's exact Gaussian (truncated at 4σ): three box passes have the right variance
    /// but a piecewise-quadratic kernel, whose peak differs from the Gaussian's by about 3%: on
    /// this high-contrast pattern (a checkerboard, a hard disc) at most 6 levels, and close on
    /// average (PSNR over 40 dB).
    @Test func blurApproximatesATrueGaussian() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        let blurred = try ImageProcessors.GaussianBlur(radius: 4).process(source)
        let reference = try ProcessingFixtures.bitmap("gaussian-4.pam")
        let difference = try #require(ProcessingFixtures.maxDifference(blurred, reference))
        let psnr = try #require(ProcessingFixtures.psnr(blurred, reference))
        #expect(difference <= 6, "max difference \(difference) from a true Gaussian")
        #expect(psnr >= 40, "PSNR \(psnr) dB against a true Gaussian")
    }

    @Test func aZeroRadiusChangesNothing() throws {
        let source = try ProcessingFixtures.bitmap("source-rgb.pam")
        #expect(try ImageProcessors.GaussianBlur(radius: 0).process(source) == source)
    }

    /// Straight alpha is blurred premultiplied: the colour of fully transparent pixels never
    /// shows. Pillow blurs RGBA channels independently, so transparent red would bleed here.
    @Test func transparentColourDoesNotBleed() throws {
        let bitmap = Bitmap(width: 20, height: 1, pixelFormat: .rgba8, bytes: (0..<20).flatMap { x in
            x < 10 ? [255, 0, 0, 0] : [0, 0, 255, 255] as [UInt8]
        })
        let blurred = try ImageProcessors.GaussianBlur(radius: 3).process(bitmap)
        for x in 0..<20 where blurred.sample(x: x, y: 0, channel: 3) > 0 {
            #expect(blurred.sample(x: x, y: 0, channel: 0) == 0, "red at \(x)")
            #expect(blurred.sample(x: x, y: 0, channel: 2) == 255, "blue at \(x)")
        }
    }

    /// Every pixel format keeps its format, and a constant image stays constant (the weights sum to 1).
    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .grayAlpha16, .rgb16, .rgba16])
    func everyFormatKeepsItsFormat(format: PixelFormat) throws {
        let value = format.bitsPerChannel == 8 ? 200 : 51_400
        var bitmap = Bitmap(width: 9, height: 7, pixelFormat: format, bytes: [UInt8](repeating: 0, count: 9 * 7 * format.bytesPerPixel))
        bitmap.withUnsafeMutableBytes { bytes in
            for i in 0..<(9 * 7 * format.channelCount) {
                if format.bitsPerChannel == 8 { bytes[i] = UInt8(value) } else { bytes.storeBytes(of: UInt16(value), toByteOffset: 2 * i, as: UInt16.self) }
            }
        }
        let blurred = try ImageProcessors.GaussianBlur(radius: 2.5).process(bitmap)
        #expect(blurred.pixelFormat == format)
        #expect(ProcessingFixtures.maxDifference(blurred, bitmap) == 0)
    }
}
