import Foundation
import NukeCore
import NukePixels
import NukeTIFF
import Testing

@Suite struct TIFFEncoderTests {
    typealias P = TIFFTestPaths

    static func gradient(_ format: PixelFormat, alphaMode: AlphaMode = .straight, width: Int = 29, height: Int = 17) -> Bitmap {
        var bytes = [UInt8](repeating: 0, count: width * height * format.bytesPerPixel)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i * 37 + i / 7) }
        if format.hasAlpha, alphaMode == .premultiplied, format.bitsPerChannel == 8 {
            // Premultiplied: no sample above its pixel's alpha.
            let channels = format.channelCount
            for p in 0..<(width * height) {
                let alpha = bytes[p * channels + channels - 1]
                for c in 0..<(channels - 1) { bytes[p * channels + c] = min(bytes[p * channels + c], alpha) }
            }
        }
        return Bitmap(width: width, height: height, pixelFormat: format, alphaMode: format.hasAlpha ? alphaMode : .none, bytes: bytes)
    }

    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .rgb16, .rgba16])
    func roundTripsLosslessly(_ format: PixelFormat) throws {
        let bitmap = Self.gradient(format)
        for compression in [ImageEncoders.TIFF.Compression.lzw, .deflate, .packBits, .none] {
            let data = try ImageEncoders.TIFF(compression: compression).encode(Image(bitmap: bitmap))
            #expect(ImageType(data) == .tiff)
            let decoded = try P.decode(data, highBitDepth: true)
            #expect(decoded.image.bitmap == bitmap, "\(format) \(compression)")
        }
    }

    @Test func writesOrientationICCAndPages() throws {
        let icc = try Data(contentsOf: P.fixtures.appendingPathComponent("../color/display-p3.icc"))
        var image = Image(bitmap: Self.gradient(.rgb8), orientation: .left)
        image.colorInfo.iccProfile = icc
        let data = try ImageEncoders.TIFF(options: ImageEncodingOptions(compressionLevel: 9), compression: .deflate).encode(image)
        let decoded = try P.decode(data)
        #expect(decoded.image.orientation == .left)
        #expect(decoded.image.colorInfo.iccProfile == icc)
        #expect(decoded.userInfo[.tiffCompressionKey] as? String == "Deflate")

        let frames = [ImageFrame(bitmap: Self.gradient(.rgb8)), ImageFrame(bitmap: Self.gradient(.gray8, width: 5, height: 3))]
        let pages = try TIFFPages(try ImageEncoders.TIFF().encode(Image(frames: frames)))
        #expect(pages.count == 2)
        #expect(try pages.decode(page: 1).image.bitmap == frames[1].bitmap)
    }

    @Test func premultipliedAlphaIsWrittenAsAssociated() throws {
        let bitmap = Self.gradient(.rgba8, alphaMode: .premultiplied)
        let data = try ImageEncoders.TIFF().encode(Image(bitmap: bitmap))
        var context = ImageDecodingContext(data: data)
        context.prefersPremultipliedAlpha = true
        let decoded = try ImageDecoderRegistry.shared.decode(context)
        #expect(decoded.image.bitmap.alphaMode == .premultiplied)
        #expect(decoded.image.bitmap == bitmap)
    }
}
