import Foundation
import Testing
import NukeCore
import NukeNetpbm

struct NetpbmTests {
    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8, .gray16, .grayAlpha16, .rgb16, .rgba16])
    func pamRoundTrips(_ format: PixelFormat) throws {
        let count = 5 * 3 * format.bytesPerPixel
        let bitmap = Bitmap(width: 5, height: 3, pixelFormat: format, bytes: (0..<count).map { UInt8(($0 * 37) & 0xFF) })
        let decoded = try Netpbm.decode(Netpbm.pam(bitmap))
        #expect(decoded == bitmap)
    }

    @Test func pamHeaderAndBigEndianSamples() {
        let bitmap = Bitmap(width: 1, height: 1, pixelFormat: .gray16, bytes: [0, 0]).withSample(0x1234)
        let pam = Netpbm.pam(bitmap)
        let header = "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 65535\nTUPLTYPE GRAYSCALE\nENDHDR\n"
        #expect(pam == Data(header.utf8) + Data([0x12, 0x34]))
    }

    @Test func readsPPMAndPGMWithComments() throws {
        let ppm = Data("P6\n# comment\n2 1\n255\n".utf8) + Data([1, 2, 3, 4, 5, 6])
        #expect(try Netpbm.decode(ppm) == Bitmap(width: 2, height: 1, pixelFormat: .rgb8, bytes: [1, 2, 3, 4, 5, 6]))
        let pgm = Netpbm.pnm(Bitmap(width: 2, height: 1, pixelFormat: .grayAlpha8, bytes: [9, 0, 8, 255]))
        #expect(try Netpbm.decode(pgm) == Bitmap(width: 2, height: 1, pixelFormat: .gray8, bytes: [9, 8]))
    }

    @Test func rejectsBadInput() {
        let truncated = #expect(throws: ImageCodecError.self) { try Netpbm.decode(Data("P6\n2 2\n255\n".utf8) + Data([1, 2, 3])) }
        #expect(truncated?.code == .incomplete)
        let garbage = #expect(throws: ImageCodecError.self) { try Netpbm.decode(Data("hello".utf8)) }
        #expect(garbage?.code == .corrupt)
        #expect(throws: ImageCodecError.self) { try Netpbm.decode(Data("P7\nWIDTH 0\nHEIGHT 1\nDEPTH 3\nMAXVAL 255\nENDHDR\n".utf8)) }
        let huge = #expect(throws: ImageCodecError.self) { try Netpbm.decode(Data("P5\n9999999999 9999999999\n255\n\0".utf8)) }
        // Limits are checked after the header, before any pixel memory.
        #expect(huge?.code == .limitExceeded)
    }

    @Test func theRegistryDecodesNetpbmThroughThePlugin() throws {
        let bitmap = Bitmap(width: 4, height: 2, pixelFormat: .rgb16, bytes: (0..<48).map { UInt8($0 * 5) })
        let pam = Netpbm.pam(bitmap)
        #expect(NetpbmPlugin.accepts(pam, context: ImageDecodingContext(data: pam)))
        #expect(ImageDecoders.Netpbm.parseHeader(pam) == .parsed(ImageHeader(
            type: .netpbm, width: 4, height: 2, bitDepth: 16, componentCount: 3, hasAlpha: false, frameCount: 1)))
        #expect(ImageDecoders.Netpbm.parseHeader(pam.prefix(12)) == .needsMoreData)
        // (Another test registers a toy PAM plugin with the same signature: the type is declared.)
        var context = ImageDecodingContext(data: pam)
        context.type = .netpbm
        let container = try ImageDecoderRegistry.shared.decode(context)
        #expect(container.type == .netpbm)
        #expect(container.image.bitmap == bitmap)
        #expect(try ImageEncoders.PAM().encode(container.image) == pam)
        let limited = #expect(throws: ImageCodecError.self) {
            var context = ImageDecodingContext(data: pam, limits: ImageLimits(maxPixelCount: 4))
            context.type = .netpbm
            return try ImageDecoderRegistry.shared.decode(context)
        }
        #expect(limited?.code == .limitExceeded)
    }
}

extension Bitmap {
    /// The bitmap with its first 16-bit sample set to `value` (native endian).
    fileprivate func withSample(_ value: UInt16) -> Bitmap {
        var copy = self
        copy.withUnsafeMutableBytes { $0.storeBytes(of: value, as: UInt16.self) }
        return copy
    }
}
