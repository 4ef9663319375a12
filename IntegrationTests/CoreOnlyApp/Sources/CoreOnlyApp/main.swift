import Foundation
import NukeCore

// With no plugin linked, the shared registry is empty and says so clearly.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CoreOnlyApp: FAIL: \(message)\n".utf8))
    exit(1)
}

guard ImageCodecs.linked.isEmpty else { fail("expected no linked codecs, found \(ImageCodecs.linked.map(\.info.name))") }
let jpeg = Data([0xFF, 0xD8, 0xFF, 0xDB, 0, 0x43, 0])
do {
    _ = try ImageDecoderRegistry.shared.decode(jpeg)
    fail("decoding succeeded without a JPEG decoder")
} catch let error as ImageCodecError where error.code == .noCodec {
    print("CoreOnlyApp: \(error)")
} catch {
    fail("unexpected error \(error)")
}

// A Nuke-style decoder registered at startup that knows nothing of target sizes: the core
// finishes its image to the planned size (its own area average: no NukePixels here).
struct Plain: ImageDecoding {
    func decode(_ data: Data) throws -> ImageContainer {
        var bytes: [UInt8] = []
        for y in 0..<30 { for x in 0..<40 { bytes += [UInt8(x * 6), UInt8(y * 8), 128, (x + y) % 2 == 0 ? 255 : 0] } }
        return ImageContainer(image: Image(bitmap: Bitmap(width: 40, height: 30, pixelFormat: .rgba8, bytes: bytes)))
    }
}
ImageDecoderRegistry.shared.register { context in context.data.starts(with: Array("PLAIN".utf8)) ? Plain() : nil }
var context = ImageDecoderRegistry.shared.makeContext(for: Data("PLAIN".utf8))
context.targetSize = ImageSize(width: 16, height: 16)
context.contentMode = .aspectFit
let small = try ImageDecoderRegistry.shared.decode(context).image.bitmap
guard small.width == 16, small.height == 12 else { fail("a closure decoder asked for 16 × 16 returned \(small.width) × \(small.height)") }
// The first output pixel covers 2.5 × 2.5 source pixels, half of them transparent: straight
// alpha is averaged by coverage, so the colour is the opaque pixels' own, not darkened.
let first = Array(small.bytes.prefix(4))
guard abs(Int(first[3]) - 128) <= 12, abs(Int(first[2]) - 128) <= 1 else { fail("the area average gave \(first)") }
print("CoreOnlyApp: a closure decoder asked for 16 × 16 returns \(small.width) × \(small.height)")
print("CoreOnlyApp: OK")
