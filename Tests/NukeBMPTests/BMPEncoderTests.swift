import Foundation
import NukeBMP
import NukeCore
import NukePixels
import Testing

@Suite struct BMPEncoderTests {
    static func image(_ format: PixelFormat, width: Int = 13, height: Int = 7) -> Bitmap {
        let count = width * height * format.bytesPerPixel
        return Bitmap(width: width, height: height, pixelFormat: format, bytes: (0..<count).map { UInt8(($0 * 41 + 7) & 0xFF) })
    }

    /// Gray, RGB and RGBA round trip exactly; the headers are 8-bit palette, 24-bit INFO and
    /// 32-bit V5 `BI_BITFIELDS`.
    @Test(arguments: [(PixelFormat.gray8, 8, 40), (.rgb8, 24, 40), (.rgba8, 32, 124)])
    func roundTrips(_ format: PixelFormat, bits: Int, headerSize: Int) throws {
        let bitmap = Self.image(format)
        let data = try ImageEncoders.BMP().encode(Image(bitmap: bitmap))
        #expect(ImageType(data) == .bmp)
        #expect(Int(data[14]) == headerSize)
        #expect(Int(data[28]) == bits)
        let decoded = try BMPTest.decode(data)
        #expect(decoded.image.bitmap == bitmap)
        #expect(decoded.userInfo[.bmpBitCountKey] as? Int == bits)
    }

    @Test func premultipliedAndSixteenBitInputIsConverted() throws {
        let bitmap = Self.image(.rgba8)
        let data = try ImageEncoders.BMP().encode(Image(bitmap: bitmap.premultiplied()))
        let decoded = try BMPTest.decode(data).image.bitmap
        #expect(decoded == bitmap.premultiplied().unpremultiplied())
        let wide = try BMPTest.decode(ImageEncoders.BMP().encode(Image(bitmap: Self.image(.rgb16)))).image.bitmap
        #expect(wide == Self.image(.rgb16).converted(to: .rgb8))
    }

    @Test func writesTheICCProfile() throws {
        let profile = try BMPTest.decode("v5-icc.bmp").image.iccProfile
        let bitmap = Self.image(.rgb8)
        let data = try ImageEncoders.BMP().encode(Image(bitmap: bitmap, colorInfo: ColorInfo(iccProfile: profile)))
        #expect(Int(data[14]) == 124)
        let decoded = try BMPTest.decode(data)
        #expect(decoded.image.iccProfile == profile)
        #expect(decoded.image.bitmap == bitmap)
    }

    @Test func refusesEmptyImages() {
        let error = #expect(throws: ImageCodecError.self) { try ImageEncoders.BMP().encode(Image(bitmap: .empty)) }
        #expect(error?.code == .encodingFailed)
    }

    @Test func theRegistryHasTheEncoder() throws {
        let data = try ImageEncoderRegistry.shared.encode(Image(bitmap: Self.image(.rgb8)), as: .bmp)
        #expect(try BMPTest.decode(data).image.bitmap == Self.image(.rgb8))
    }
}
