import Foundation
import NukeCore
import NukePixels
import Testing
@testable import NukePNG

/// ``ImageEncoders/PNG``: lossless round trips through ``ImageDecoders/PNG``.
@Suite struct ImageEncodersPNGTests {
    static let formats: [PixelFormat] = [.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .grayAlpha16, .rgb16, .rgba16]

    @Test(arguments: formats, [false, true])
    func roundTripsEveryPixelFormat(_ format: PixelFormat, interlaced: Bool) throws {
        let bitmap = PNGTestImages.gradient(width: 53, height: 31, format: format)
        let data = try ImageEncoders.PNG(options: ImageEncodingOptions(isProgressive: interlaced)).encode(Image(bitmap: bitmap))
        let decoded = try PNGTestDecoding.decode(data, highBitDepth: true)
        #expect(decoded.image.bitmap == bitmap)
        #expect(decoded.userInfo[.isProgressiveKey] as? Bool == interlaced)
        if format.bitsPerChannel == 16 {
            // The default 8-bit decode scales as Bitmap.converted(to:) does.
            let eight = PixelFormat(channels: format.channels, bitsPerChannel: 8)
            #expect(try PNGTestDecoding.decode(data).image.bitmap == bitmap.converted(to: eight))
        }
    }

    @Test func keepsColorInfoAndEXIF() throws {
        let profile = try Self.iccProfile()
        var exif = Data("MM\0*\0\0\0\u{8}\0\u{1}".utf8)  // TIFF header, IFD0 with one entry:
        exif += Data([0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        var image = Image(bitmap: PNGTestImages.gradient(width: 9, height: 7, format: .rgba8), orientation: .right, exif: exif)
        image.colorInfo = ColorInfo(iccProfile: profile, gamma: 0.45455)
        let decoded = try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(image)).image
        #expect(decoded.colorInfo.iccProfile == profile)
        #expect(decoded.colorInfo.gamma == 0.45455)
        #expect(decoded.exif == exif)
        #expect(decoded.orientation == .right)
        #expect(decoded.bitmap == image.bitmap)

        // Pixels already upright (the orientation applied): the EXIF block is written with 1.
        image.orientation = .up
        let upright = try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(image)).image
        #expect(upright.orientation == .up)
        #expect(upright.exif.flatMap(ExifBlock.init)?.orientation == .up)
        #expect(upright.exif?.count == exif.count)

        let withoutProfile = try ImageEncoders.PNG(options: ImageEncodingOptions(preservesColorProfile: false)).encode(image)
        #expect(try PNGTestDecoding.decode(withoutProfile).image.colorInfo.iccProfile == nil)
    }

    /// Profiles libpng objects to do not fail the encode: a malformed one is left out; HP's
    /// "known incorrect sRGB profile", which photographs carry (from Nuke's test JPEG when
    /// ../shared/corpora is present), is written as the source had it, with libpng's warning.
    /// The thumbnail service's load test found the encode failing on it.
    @Test func aProfileLibpngObjectsToDoesNotFailTheEncode() throws {
        var cases: [(profile: Data, isKept: Bool)] = [(Data(repeating: 0, count: 200), false)]
        let jpeg = PNGTestPaths.repositoryRoot.appendingPathComponent("../shared/corpora/jpeg/kean_Nuke/Tests/Resources/fixture.jpeg")
        if let file = try? Data(contentsOf: jpeg), let marker = file.range(of: Data("ICC_PROFILE\0".utf8)) {
            // APP2: FF E2, a 16-bit length counting itself, "ICC_PROFILE\0", sequence, count, profile.
            let length = Int(file[marker.lowerBound - 2]) << 8 | Int(file[marker.lowerBound - 1])
            let profile = Data(file[(marker.upperBound + 2)..<(marker.lowerBound - 2 + length)])
            #expect(profile.count == 3144)
            cases.append((profile, true))
        }
        for (profile, isKept) in cases {
            var image = Image(bitmap: PNGTestImages.gradient(width: 9, height: 7, format: .rgb8))
            image.colorInfo = ColorInfo(iccProfile: profile)
            let decoded = try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(image)).image
            #expect(decoded.bitmap == image.bitmap)
            #expect(decoded.colorInfo.iccProfile == (isKept ? profile : nil))
        }
    }

    @Test func keepsSRGBIntent() throws {
        var image = Image(bitmap: PNGTestImages.gradient(width: 9, height: 7, format: .rgb8))
        image.colorInfo = ColorInfo(sRGBIntent: 1)
        let decoded = try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(image)).image
        #expect(decoded.colorInfo.sRGBIntent == 1)
        #expect(decoded.colorInfo.gamma == nil, "an sRGB chunk alone reports no gAMA")
    }

    @Test func unpremultipliesFirst() throws {
        let straight = PNGTestImages.gradient(width: 16, height: 16, format: .rgba8)
        let premultiplied = straight.premultiplied()
        let decoded = try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(Image(bitmap: premultiplied))).image.bitmap
        #expect(decoded.alphaMode == .straight)
        #expect(decoded == premultiplied.unpremultiplied())
    }

    @Test func compressionLevelChangesSizeNotPixels() throws {
        let image = Image(bitmap: PNGTestImages.gradient(width: 128, height: 64, format: .rgb8))
        let stored = try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 0)).encode(image)
        let best = try ImageEncoders.PNG(options: ImageEncodingOptions(compressionLevel: 9)).encode(image)
        #expect(stored.count > best.count)
        #expect(stored.count > 128 * 64 * 3)
        #expect(try PNGTestDecoding.decode(stored).image == PNGTestDecoding.decode(best).image)
    }

    @Test func rowPaddingIsNotWritten() throws {
        let packed = PNGTestImages.gradient(width: 10, height: 5, format: .rgb8)
        var padded = [UInt8](repeating: 0xEE, count: 40 * 5)
        for y in 0..<5 {
            padded.replaceSubrange((y * 40)..<(y * 40 + 30), with: packed.bytes[(y * 30)..<(y * 30 + 30)])
        }
        let bitmap = Bitmap(width: 10, height: 5, pixelFormat: .rgb8, bytesPerRow: 40, bytes: padded)
        #expect(try PNGTestDecoding.decode(try ImageEncoders.PNG().encode(Image(bitmap: bitmap))).image.bitmap == packed)
    }

    @Test func emptyImageFails() {
        let error = #expect(throws: ImageCodecError.self) { try ImageEncoders.PNG().encode(Image(bitmap: .empty)) }
        #expect(error?.code == .encodingFailed)
    }

    /// A real ICC profile: the fixture's, or a minimal valid one when fixtures are absent.
    static func iccProfile() throws -> Data {
        if pngFixturesExist, let profile = try PNGTestDecoding.decode(try PNGTestPaths.fixture("iccp.png")).image.colorInfo.iccProfile {
            return profile
        }
        Issue.record("Fixtures/png/iccp.png is missing")
        return Data()
    }
}
