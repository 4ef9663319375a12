import Foundation
import NukeCore
import NukePixels
import Testing

/// ``ImageDecoderRegistry/allocator``: decoders get it through the context, so a pool makes
/// repeated decodes reuse pixel memory.
@Suite struct ImageDecoderRegistryAllocatorTests {
    /// Decodes any data into a 256 × 256 RGBA bitmap allocated through the context's allocator.
    struct AllocatingDecoder: ImageDecoding {
        var allocator: PixelAllocator
        func decode(_ data: Data) throws -> ImageContainer {
            let bitmap = try allocator.makeBitmap(width: 256, height: 256, pixelFormat: .rgba8) { bytes in
                bytes.initializeMemory(as: UInt8.self, repeating: data.first ?? 0)
            }
            return ImageContainer(image: Image(bitmap: bitmap))
        }
    }

    let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])

    private func registry() -> ImageDecoderRegistry {
        let codec = ImageCodec(
            info: ImageCodecInfo(name: "allocating", type: .png, capabilities: .decode),
            makeDecoder: { context in AllocatingDecoder(allocator: context.allocator) }
        )
        return ImageDecoderRegistry(codecs: [codec])
    }

    @Test func contextsCarryTheRegistryAllocator() throws {
        let registry = registry()
        let pool = PixelBufferPool()
        registry.allocator = .pool(pool)
        _ = try registry.decode(registry.makeContext(for: png))
        #expect(pool.statistics.misses == 1)
    }

    @Test func repeatedDecodesThroughAPoolReuseOneBuffer() throws {
        let registry = registry()
        let pool = PixelBufferPool()
        registry.allocator = .pool(pool)
        for _ in 0..<10 {
            let image = try registry.decode(png).image
            #expect(image.bitmap.sample(x: 255, y: 255, channel: 0) == 0x89)
        }
        #expect(pool.statistics.misses == 1)
        #expect(pool.statistics.hits == 9)
    }

    @Test func settingTheHeapBackLeavesThePoolAlone() throws {
        let registry = registry()
        let pool = PixelBufferPool()
        registry.allocator = .pool(pool)
        registry.allocator = .heap
        #expect(try registry.decode(png).image.width == 256)
        #expect(pool.statistics.hits + pool.statistics.misses == 0)
    }
}
