import Foundation
import NukeCore

// With no plugin linked, the shared registry is empty and says so clearly.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CoreOnlyApp: FAIL: \(message)\n".utf8))
    exit(1)
}

guard ImageCodecs.linked.isEmpty else { fail("expected no linked codecs, found \(ImageCodecs.linked.map(\.info.name))") }
let jpeg = Data([0xFF, 0xD8, 0xFF, 0xDB, 0, 0x43, 0])
do {
    _ = try ImageDecoderRegistry.shared.decode(jpeg)
    fail("decoding succeeded without a JPEG decoder")
} catch let error as ImageCodecError where error.code == .noCodec {
    print("CoreOnlyApp: \(error)")
} catch {
    fail("unexpected error \(error)")
}
print("CoreOnlyApp: OK")
