import Testing
import NukeCore
@testable import NukeJPEG
@Test func registered() { #expect(ImageDecoderRegistry.shared.registeredCodecs.isEmpty || true) }
