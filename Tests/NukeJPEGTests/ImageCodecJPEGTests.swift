import Foundation
import NukeCore
import Testing
import NukeJPEG

@Suite("ImageCodec.jpeg")
struct ImageCodecJPEGTests {
    @Test func info() {
        let info = ImageCodec.jpeg.info
        #expect(info.name == "NukeJPEG")
        #expect(info.type == .jpeg)
        #expect(info.capabilities == [.decode, .encode, .progressive, .scaledDecode])
        #expect(info.library == "libjpeg-turbo")
        #expect(info.libraryVersion == "2.1.5")
        #expect(info.codecDescription == "libjpeg-turbo 2.1.5")
    }

    @Test func registersItselfThroughTheLinkerSection() throws {
        #expect(ImageCodecs.linked.contains { $0.info.name == "NukeJPEG" })
        #expect(ImageDecoderRegistry.shared.registeredFormats.contains(.jpeg))
        #expect(ImageEncoderRegistry.shared.registeredFormats.contains(.jpeg))
        let data = try JPEGFixtures.data("baseline-420.jpg")
        let container = try ImageDecoderRegistry.shared.decode(data)
        #expect(container.image.bitmap == (try JPEGFixtures.reference("baseline-420.pam")))
    }

    @Test func registryMakesAPartialDecoder() throws {
        let data = try JPEGFixtures.data("progressive.jpg")
        let registry = ImageDecoderRegistry(codecs: [.jpeg])
        let decoder = try #require(registry.decoder(for: registry.makeContext(for: data.prefix(500), isCompleted: false)))
        #expect(decoder is ImageDecoders.JPEG)
    }

    @Test func encoderFromRegistry() throws {
        let registry = ImageEncoderRegistry(codecs: [.jpeg])
        let image = Image(bitmap: try JPEGFixtures.reference("baseline-444.pam"))
        let data = try registry.encode(image, as: .jpeg, options: ImageEncodingOptions(quality: 0.9))
        #expect(ImageType(data) == .jpeg)
    }
}
