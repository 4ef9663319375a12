import Foundation
import Testing
@testable import NukePipeline

@Suite struct SHA256Tests {
    /// FIPS 180-4's examples, a message that needs a second block for its length, and a cache
    /// file name as `sha256sum` names it (so caches written before keep their names).
    @Test func matchesTheStandardsVectors() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(Data(repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(DataCache.fileName(forKey: "https://example.com/a.jpg") == "276a1ac00ba4f0ea47eeeafca24284f41bc78dc593af1f048615aceba44ab9d9")
    }
}
