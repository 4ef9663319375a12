import Foundation
import NukeCore
import Testing

// A decoder and an encoder written as for Nuke 12 and 13 (their protocols, names and idioms),
// with nothing changed but the import: they must compile and work here.

/// Nuke's custom decoder idiom: a failable `init?(context:)` that looks at the data, a
/// throwing `decode(_:)` that returns a container with its `AssetType`.
private struct XBMishDecoder: ImageDecoding {
    init?(context: ImageDecodingContext) {
        guard context.data.starts(with: Array("#define".utf8)) else { return nil }
    }

    var isAsynchronous: Bool { true }

    func decode(_ data: Data) throws -> ImageContainer {
        let image = PlatformImage(bitmap: Bitmap(width: 2, height: 1, pixelFormat: .gray8, bytes: [0, 255]))
        return ImageContainer(image: image, type: AssetType(rawValue: "public.xbitmap-image"), data: data)
    }
}

/// Nuke's encoder signature: non-throwing, `nil` on failure.
private struct NukeStyleEncoder: ImageEncoding {
    func encode(_ image: PlatformImage) -> Data? {
        image.width > 0 ? Data("encoded \(image.width)×\(image.height)".utf8) : nil
    }
}

@Suite struct NukeCompatibilityTests {
    @Test func aNukeDecoderRegistersAndDecodes() throws {
        let registry = ImageDecoderRegistry()
        registry.register(XBMishDecoder.init)
        let container = try registry.decode(Data("#define x_width 2".utf8))
        #expect(container.type == AssetType(rawValue: "public.xbitmap-image"))
        #expect(container.data != nil)
        #expect(container.image.width == 2)
        #expect(XBMishDecoder(context: ImageDecodingContext(data: Data("#define".utf8)))?.isAsynchronous == true)
    }

    @Test func aNukeEncoderServesBothAPIs() throws {
        let image = Image(bitmap: Bitmap(width: 3, height: 2, pixelFormat: .rgb8, bytes: [UInt8](repeating: 9, count: 18)))
        let encoder = NukeStyleEncoder()
        // Nuke's call: `if let`, as Nuke's pipeline writes it.
        if let data = encoder.encode(image) {
            #expect(data == Data("encoded 3×2".utf8))
        } else {
            Issue.record("the Nuke-style encoder returned nil")
        }
        // Through the throwing API, as the registry and the rest of NukeCodecs call it.
        func throwing(_ encoder: some ImageEncoding) throws -> Data { try encoder.encode(image) }
        #expect(try throwing(encoder) == Data("encoded 3×2".utf8))
        #expect(encoder.encode(ImageContainer(image: image), context: ImageEncodingContext(image: image)) == Data("encoded 3×2".utf8))
        // Its `nil` becomes an error that says so.
        let empty = Image(bitmap: .empty)
        func throwingEmpty(_ encoder: some ImageEncoding) throws -> Data { try encoder.encode(empty) }
        let error = try #require(throws: ImageCodecError.self) { try throwingEmpty(encoder) }
        #expect(error.code == .encodingFailed)
    }

    /// Nuke 13's identifiers, and sniffing through `AssetType(data)`.
    @Test func assetTypesAreNuke13s() {
        #expect(AssetType.webp.rawValue == "org.webmproject.webp")
        #expect(AssetType.avif.rawValue == "public.avif")
        #expect(AssetType.mp4.rawValue == "public.mpeg-4")
        #expect(AssetType([0xFF, 0xD8, 0xFF, 0xE0] + Data(count: 12)) == .jpeg)
    }

    @Test func defaultDecoderUsesTheLinkedCodecs() throws {
        let bitmap = Bitmap(width: 4, height: 3, pixelFormat: .rgb8, bytes: [UInt8](repeating: 80, count: 36))
        let data = try ImageEncoderRegistry.shared.encode(Image(bitmap: bitmap), as: .png)
        let container = try ImageDecoders.Default().decode(data)
        #expect(container.type == .png && container.image.width == 4)
        #expect(ImageDecoders.Default(data: Data("nothing".utf8), context: ImageDecodingContext(data: Data("nothing".utf8))) == nil)
    }
}
