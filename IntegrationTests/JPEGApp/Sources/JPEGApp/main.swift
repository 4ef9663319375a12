import Foundation
import NukeCore

// Note: no `import NukeJPEG` and no registration call. Listing the product is enough.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("JPEGApp: FAIL: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3,
      let jpeg = FileManager.default.contents(atPath: arguments[1]),
      let png = FileManager.default.contents(atPath: arguments[2]) else {
    fail("usage: JPEGApp FILE.jpg FILE.png")
}

// 1. JPEG decodes through the shared registry.
do {
    let container = try ImageDecoderRegistry.shared.decode(jpeg)
    guard container.type == .jpeg, container.image.width > 0 else { fail("bad JPEG result \(container.image.bitmap)") }
    print("JPEGApp: decoded JPEG \(container.image.width)×\(container.image.height) with \(ImageDecoderRegistry.shared.registeredCodecs.map(\.codecDescription))")
} catch {
    fail("JPEG did not decode: \(error)")
}

// 2. PNG is not linked: a clear error.
do {
    _ = try ImageDecoderRegistry.shared.decode(png)
    fail("PNG decoded without NukePNG linked")
} catch let error as ImageCodecError where error.code == .noCodec && error.format == .png {
    print("JPEGApp: \(error)")
} catch {
    fail("unexpected PNG error \(error)")
}

// 3. A decoder registered at startup wins for its format.
struct SolidDecoder: ImageDecoding {
    func decode(_ data: Data) throws -> ImageContainer {
        ImageContainer(image: Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .gray8, bytes: [42])), type: .jpeg)
    }
}
ImageDecoderRegistry.shared.register(for: .jpeg, name: "SolidDecoder") { _ in SolidDecoder() }
do {
    let container = try ImageDecoderRegistry.shared.decode(jpeg)
    guard container.image.width == 1, container.image.bitmap.bytes == [42] else { fail("the custom decoder did not win") }
    print("JPEGApp: the custom decoder won for JPEG")
} catch {
    fail("custom decoder failed: \(error)")
}
print("JPEGApp: OK")
