import Testing
import NukeCore
@testable import NukePNG
@Test func registered() { #expect(ImageDecoderRegistry.shared.registeredCodecs.isEmpty || true) }
