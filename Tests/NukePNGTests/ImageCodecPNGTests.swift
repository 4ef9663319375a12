import Foundation
import NukeCore
import Testing
@testable import NukePNG

/// ``NukeCore/ImageCodec/png`` and its self-registration.
@Suite struct ImageCodecPNGTests {
    @Test func describesLibpng() {
        let info = ImageCodec.png.info
        #expect(info.name == "NukePNG")
        #expect(info.type == .png)
        #expect(info.capabilities == [.decode, .encode, .progressive, .highBitDepth])
        #expect(info.library == "libpng")
        #expect(info.libraryVersion.hasPrefix("1.6."))
        #expect(info.codecDescription == PNGLibrary.codecName)
    }

    @Test func registersItselfWithTheSharedRegistries() throws {
        let data = try ImageEncoderRegistry.shared.encode(
            Image(bitmap: PNGTestImages.gradient(width: 8, height: 8, format: .rgba8)), as: .png, options: ImageEncodingOptions()
        )
        #expect(ImageType(data) == .png)
        let decoder = try #require(ImageDecoderRegistry.shared.decoder(for: ImageDecodingContext(data: data)))
        #expect(decoder is ImageDecoders.PNG)
        let partial = data.prefix(20)
        #expect(ImageDecoderRegistry.shared.decoder(for: ImageDecodingContext(data: partial, isCompleted: false)) is ImageDecoders.PNG)
    }
}
