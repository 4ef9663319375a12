import BombCorpus
import Foundation
import NukeBMP
import NukeCore
import NukeGIF
import NukeHEIF
import NukeICO
import NukeJPEG
import NukeJXL
import NukePNG
import NukeSVG
import NukeTIFF
import NukeWebP
import NukeXBM
import Synchronization
import Testing

@Suite struct BombTests {
    @Test(arguments: Bombs.all.map(\.name))
    func failsFastWithoutPixelMemory(_ name: String) throws {
        let bomb = try #require(Bombs.all.first { $0.name == name })
        let data = bomb.data
        #expect(data.count < 40_000, "\(name) is \(data.count) bytes")
        let requested = Mutex(0)
        let counting = PixelAllocator { byteCount, zeroed throws(ImageCodecError) in
            requested.withLock { $0 += byteCount }
            return PixelStorage.allocate(byteCount: byteCount, zeroed: zeroed)
        }
        var context = ImageDecoderRegistry.shared.makeContext(for: data)
        context.limits = .untrusted
        context.allocator = counting
        let started = ContinuousClock.now
        let error = try #require(throws: ImageCodecError.self) { try ImageDecoderRegistry.shared.decode(context) }
        #expect(error.code == bomb.code, "\(name): \(error)")
        #expect(requested.withLock { $0 } == 0, "\(name): pixel memory was requested before the error")
        #expect(ContinuousClock.now - started < .seconds(2), "\(name)")
    }
}
