import Foundation
import Testing
@testable import NukeCore

/// Writes the format's name, so a test can tell which encoder ran.
struct NameEncoder: ImageEncoding {
    let name: String
    func encode(_ image: Image) throws -> Data { Data(name.utf8) }
}

struct ImageEncoderRegistryTests {
    let opaque = Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .rgb8, bytes: [1, 2, 3]))
    let translucent = Image(bitmap: Bitmap(width: 1, height: 1, pixelFormat: .rgba8, bytes: [1, 2, 3, 4]))

    func registry(_ types: [ImageType]) -> ImageEncoderRegistry {
        let registry = ImageEncoderRegistry()
        for type in types {
            registry.register(for: type) { _ in NameEncoder(name: type.name) }
        }
        return registry
    }

    @Test func keyedByFormatNewestFirst() throws {
        let registry = registry([.jpeg, .png])
        #expect(try registry.encode(opaque, as: .png) == Data("PNG".utf8))
        let token = registry.register(for: .png, name: "mine") { _ in NameEncoder(name: "mine") }
        #expect(try registry.encode(opaque, as: .png) == Data("mine".utf8))
        registry.unregister(token)
        #expect(try registry.encode(opaque, as: .png) == Data("PNG".utf8))
        #expect(registry.registeredFormats == [.jpeg, .png])
    }

    @Test func missingEncoderIsAClearError() {
        let error = #expect(throws: ImageCodecError.self) { try registry([.png]).encode(opaque, as: .webp) }
        #expect(error?.code == .noCodec)
        #expect(error?.stage == .encoding)
        #expect(error?.message.contains("no encoder is registered for WebP") == true)
    }

    @Test func defaultEncoderChoosesByAlphaAndHEIFPreference() throws {
        let plain = ImageEncoders.Default(registry: registry([.jpeg, .png]))
        #expect(try plain.encode(opaque) == Data("JPEG".utf8))
        #expect(try plain.encode(translucent) == Data("PNG".utf8))

        let heifWithoutEncoder = ImageEncoders.Default(isHEIFPreferred: true, registry: registry([.jpeg, .png]))
        #expect(try heifWithoutEncoder.encode(opaque) == Data("JPEG".utf8))

        let heif = ImageEncoders.Default(isHEIFPreferred: true, registry: registry([.jpeg, .png, .heic]))
        #expect(try heif.encode(opaque) == Data("HEIC".utf8))
        #expect(try heif.encode(translucent) == Data("HEIC".utf8))
    }

    @Test func optionsReachTheEncoder() throws {
        let registry = ImageEncoderRegistry()
        registry.register(for: .jpeg) { options in NameEncoder(name: "q\(Int(options.quality * 100))") }
        #expect(try ImageEncoders.Default(compressionQuality: 0.5, registry: registry).encode(opaque) == Data("q50".utf8))
    }
}
