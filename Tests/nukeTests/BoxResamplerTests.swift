import NukeCore
import Testing
@testable import nuke

@Suite struct BoxResamplerTests {
    @Test func integerFactorAveragesBlocks() {
        // 4×2 gray → 2×1: each output is the mean of a 2×2 block.
        let bitmap = Bitmap(width: 4, height: 2, pixelFormat: .gray8, bytes: [0, 10, 100, 200, 20, 30, 50, 250])
        let small = BoxResampler.resize(bitmap, width: 2, height: 1)
        #expect(small.packedBytes == [15, 150])
    }

    @Test func fractionalFactorWeighsOverlap() {
        // 3 → 2: output 0 covers source 0 fully and half of 1; output 1 the other half of 1 and 2.
        let bitmap = Bitmap(width: 3, height: 1, pixelFormat: .gray8, bytes: [0, 90, 180])
        #expect(BoxResampler.resize(bitmap, width: 2, height: 1).packedBytes == [30, 150])
    }

    @Test func transparentPixelsDoNotDarken() {
        // A white opaque pixel next to a fully transparent black one: colour stays white.
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .rgba8, bytes: [255, 255, 255, 255, 0, 0, 0, 0])
        #expect(BoxResampler.resize(bitmap, width: 1, height: 1).packedBytes == [255, 255, 255, 128])
    }

    @Test func sixteenBit() {
        let bitmap = Bitmap(width: 2, height: 1, pixelFormat: .gray16) { raw in
            raw.storeBytes(of: UInt16(1000), toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: UInt16(3000), toByteOffset: 2, as: UInt16.self)
        }
        let small = BoxResampler.resize(bitmap, width: 1, height: 1)
        #expect(small.sample(x: 0, y: 0, channel: 0) == 2000)
        #expect(small.pixelFormat == .gray16)
    }

    @Test func uniformImageStaysUniform() {
        let bitmap = Bitmap(width: 97, height: 61, pixelFormat: .rgb8, bytes: [UInt8](repeating: 77, count: 97 * 61 * 3))
        let small = BoxResampler.resize(bitmap, width: 13, height: 7)
        #expect(small.packedBytes.allSatisfy { $0 == 77 })
    }

    @Test func fittingSize() {
        #expect(BoxResampler.fittingSize(ImageSize(width: 640, height: 427), in: ImageSize(width: 100, height: 100)) == ImageSize(width: 100, height: 67))
        #expect(BoxResampler.fittingSize(ImageSize(width: 61, height: 45), in: ImageSize(width: 30, height: 30)) == ImageSize(width: 30, height: 22))
        #expect(BoxResampler.fittingSize(ImageSize(width: 50, height: 40), in: ImageSize(width: 100, height: 100)) == ImageSize(width: 50, height: 40))
        #expect(BoxResampler.fittingSize(ImageSize(width: 10_000, height: 1), in: ImageSize(width: 10, height: 10)) == ImageSize(width: 10, height: 1))
    }
}
