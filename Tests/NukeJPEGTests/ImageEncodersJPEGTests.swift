import Foundation
import NukeCore
import NukePixels
import Testing
import NukeJPEG

@Suite("ImageEncoders.JPEG")
struct ImageEncodersJPEGTests {
    private let reference = try! JPEGFixtures.reference("baseline-444.pam")

    private func decode(_ data: Data) throws -> ImageContainer {
        try ImageDecoders.JPEG().decode(data)
    }

    /// The number of SOS markers.
    private func scanCount(_ data: Data) -> Int {
        let bytes = [UInt8](data)
        return zip(bytes, bytes.dropFirst()).filter { $0 == 0xFF && $1 == 0xDA }.count
    }

    @Test(arguments: [false, true])
    func roundTrip(_ progressive: Bool) throws {
        let data = try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.95, isProgressive: progressive))
            .encode(Image(bitmap: reference))
        #expect(data.starts(with: [0xFF, 0xD8, 0xFF]))
        let decoded = try decode(data)
        #expect(decoded.image.bitmap.pixelFormat == .rgb8)
        #expect(decoded.image.bitmap.maxDifference(to: reference) <= 48)
        #expect(decoded.userInfo[.isProgressiveKey] as? Bool == progressive)
        #expect(progressive ? scanCount(data) > 1 : scanCount(data) == 1)
    }

    @Test func qualityChangesSize() throws {
        let image = Image(bitmap: try JPEGFixtures.reference("baseline-420-160x120.pam"))
        let low = try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.1)).encode(image)
        let high = try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 1)).encode(image)
        #expect(low.count < high.count)
    }

    @Test func grayIsEncodedAsGrayscale() throws {
        let gray = try JPEGFixtures.reference("grayscale.pam")
        let decoded = try decode(try ImageEncoders.JPEG().encode(Image(bitmap: gray)))
        #expect(decoded.image.bitmap.pixelFormat == .gray8)
        #expect(decoded.image.bitmap.maxDifference(to: gray) <= 48)
    }

    @Test func alphaIsDroppedAnd16BitRounded() throws {
        let rgba16 = reference.converted(to: .rgba16)
        let decoded = try decode(try ImageEncoders.JPEG(options: ImageEncodingOptions(quality: 0.95)).encode(Image(bitmap: rgba16)))
        #expect(decoded.image.bitmap.pixelFormat == .rgb8)
        #expect(decoded.image.bitmap.maxDifference(to: reference) <= 48)
    }

    @Test func iccProfileRoundTripsByteForByte() throws {
        let source = try decode(JPEGFixtures.data("icc-multichunk.jpg")).image
        let profile = try #require(source.colorInfo.iccProfile)
        #expect(profile.count == 66_544)
        let decoded = try decode(try ImageEncoders.JPEG().encode(source))
        #expect(decoded.image.colorInfo.iccProfile == profile)

        let stripped = try decode(try ImageEncoders.JPEG(options: ImageEncodingOptions(preservesColorProfile: false)).encode(source))
        #expect(stripped.image.colorInfo.iccProfile == nil)
    }

    @Test func exifAndOrientationSurvive() throws {
        let source = try decode(JPEGFixtures.data("exif-orientation-6-be.jpg")).image
        let decoded = try decode(try ImageEncoders.JPEG().encode(source)).image
        #expect(decoded.orientation == .right)
        #expect(decoded.exif == source.exif)
    }

    @Test func orientationWithoutExifGetsAMinimalBlock() throws {
        let decoded = try decode(try ImageEncoders.JPEG().encode(Image(bitmap: reference, orientation: .left))).image
        #expect(decoded.orientation == .left)
    }

    @Test func emptyImageThrows() {
        #expect(throws: ImageCodecError.self) { try ImageEncoders.JPEG().encode(Image(bitmap: .empty)) }
    }

    @Test func tooLargeForJPEGThrowsLibjpegMessage() throws {
        let wide = Bitmap(width: 70_000, height: 1, pixelFormat: .gray8, bytes: [UInt8](repeating: 0, count: 70_000))
        let error = try #require(throws: ImageCodecError.self) { try ImageEncoders.JPEG().encode(Image(bitmap: wide)) }
        #expect(error.code == .encodingFailed)
        #expect(error.message.contains("Maximum supported image dimension"))
    }
}
