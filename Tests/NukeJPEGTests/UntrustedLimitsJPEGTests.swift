import Foundation
import NukeCore
@testable import NukeJPEG
import Testing

/// ``ImageLimits/untrusted``: a small file that declares a huge image (a decompression bomb)
/// fails at the header; ordinary photos decode.
@Suite struct UntrustedLimitsJPEGTests {
    /// A small baseline JPEG whose SOF0 is patched to declare `width`×`height`: libjpeg would
    /// "decode" it to grey with a warning, as the 662-byte 6,973 × 8,193 file did.
    func bomb(width: Int, height: Int) throws -> Data {
        var data = try JPEGFixtures.data("baseline-1x1.jpg")
        let sof = try #require(data.range(of: Data([0xFF, 0xC0])))
        let at = sof.upperBound + 3   // length (2), precision (1), then height and width
        data[at] = UInt8(height >> 8); data[at + 1] = UInt8(height & 0xFF)
        data[at + 2] = UInt8(width >> 8); data[at + 3] = UInt8(width & 0xFF)
        return data
    }

    func decode(_ data: Data, limits: ImageLimits) throws -> ImageContainer {
        try ImageDecoderRegistry(codecs: [.jpeg]).decode(ImageDecodingContext(data: data, limits: limits))
    }

    @Test func smallFileDeclaringAHugeImageIsRefused() throws {
        let data = try bomb(width: 6_973, height: 8_193)
        #expect(data.count < 2_000)
        let error = try #require(throws: ImageCodecError.self) { try decode(data, limits: .untrusted) }
        #expect(error.code == .limitExceeded)
    }

    @Test func expansionCeilingAloneRefusesIt() throws {
        // Under the pixel limit (4,000 × 3,000), but 36 MB out of a few hundred bytes.
        let data = try bomb(width: 4_000, height: 3_000)
        var limits = ImageLimits.default
        limits.maxDecodedBytesPerInputByte = ImageLimits.untrusted.maxDecodedBytesPerInputByte
        let error = try #require(throws: ImageCodecError.self) { try decode(data, limits: limits) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("per input byte"))
    }

    @Test(arguments: ["baseline-420.jpg", "progressive.jpg", "icc.jpg", "cmyk-adobe.jpg"])
    func ordinaryFilesDecode(_ name: String) throws {
        let data = try JPEGFixtures.data(name)
        #expect(try decode(data, limits: .untrusted).image.width > 0)
    }
}
