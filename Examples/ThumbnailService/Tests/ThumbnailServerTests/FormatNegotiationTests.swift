import NukeCore
import Testing
@testable import ThumbnailServer

@Suite struct FormatNegotiationTests {
    @Test(arguments: [
        ("image/avif,image/webp,image/apng,image/*,*/*;q=0.8", ImageType.avif),  // Chrome
        ("image/webp,*/*", .webp),  // Firefox before AVIF
        ("image/avif;q=0.5,image/webp;q=0.9,*/*;q=0.1", .webp),
        ("image/avif;q=0,image/webp;q=0,*/*", .jpeg),
        ("*/*", .jpeg),  // an old client: never AVIF or WebP on a wildcard
        ("image/*", .jpeg),
        ("image/png, image/jpeg;q=0.4", .jpeg),
        ("IMAGE/WEBP", .webp),
    ])
    func choosesByQValue(_ accept: String, _ expected: ImageType) {
        #expect(FormatNegotiation.choose(accept: accept, default: .webp) == expected)
    }

    @Test func noAcceptIsTheDefaultAndNothingAcceptableIsNil() {
        #expect(FormatNegotiation.choose(accept: nil, default: .webp) == .webp)
        #expect(FormatNegotiation.choose(accept: "", default: .png) == .png)
        #expect(FormatNegotiation.choose(accept: "image/png", default: .webp) == nil)
        #expect(FormatNegotiation.choose(accept: "image/jpeg;q=0, image/webp;q=bogus", default: .webp) == nil)
    }
}
