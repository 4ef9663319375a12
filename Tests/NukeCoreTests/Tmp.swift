import Testing
@testable import NukeCore
@Test func placeholderBuild() { #expect(ImageType.jpeg.name == "JPEG") }
