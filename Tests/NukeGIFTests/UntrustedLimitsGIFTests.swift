import Foundation
import NukeCore
@testable import NukeGIF
import Testing

/// ``ImageLimits/maxDecodedBytesPerInputByte`` for GIF: a small file whose logical screen declares
/// a large canvas fails at the header when the decode has the whole input.
@Suite struct UntrustedLimitsGIFTests {
    /// `still.gif` with its logical screen patched to `width`×`height` (the frame stays small).
    func bomb(width: Int, height: Int) throws -> Data {
        var data = try GIFTestPaths.fixture("still.gif")
        let start = data.startIndex
        data[start + 6] = UInt8(width & 0xFF); data[start + 7] = UInt8(width >> 8)
        data[start + 8] = UInt8(height & 0xFF); data[start + 9] = UInt8(height >> 8)
        return data
    }

    func decode(_ data: Data, limits: ImageLimits) throws -> ImageContainer {
        try ImageDecoderRegistry(codecs: [.gif]).decode(ImageDecodingContext(data: data, limits: limits))
    }

    @Test func expansionCeilingRefusesAHugeScreen() throws {
        // Under the untrusted pixel limit (6,000 × 6,000), but 144 MB out of a small file.
        let data = try bomb(width: 6_000, height: 6_000)
        #expect(data.count < 10_000)
        var limits = ImageLimits.default
        limits.maxDecodedBytesPerInputByte = ImageLimits.untrusted.maxDecodedBytesPerInputByte
        let error = try #require(throws: ImageCodecError.self) { try decode(data, limits: limits) }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("per input byte"))
    }

    @Test func untrustedRefusesAHugeScreen() throws {
        let error = try #require(throws: ImageCodecError.self) {
            try decode(try bomb(width: 65_535, height: 65_535), limits: .untrusted)
        }
        #expect(error.code == .limitExceeded)
    }

    @Test func ordinaryFileDecodesUnderUntrusted() throws {
        let container = try decode(try GIFTestPaths.fixture("still.gif"), limits: .untrusted)
        #expect(container.type == .gif)
    }
}
