import Foundation
import NukeCore
import NukeIsolation

// First thing: when this executable was started as a helper, serve decodes and exit.
IsolatedDecoding.runHelperIfRequested()

// The policy for untrusted input: the formats whose library is known to crash, isolated.
let pool = HelperPool()
IsolatedDecoding.install(on: .shared, policy: .knownCrashers, pool: pool)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("IsolatedApp: FAIL: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2 else { fail("usage: IsolatedApp FILE.heic FILE.jpg") }
let heic = try Data(contentsOf: URL(fileURLWithPath: arguments[arguments.startIndex]))
let jpeg = try Data(contentsOf: URL(fileURLWithPath: arguments[arguments.startIndex + 1]))

// HEIC goes to a helper; JPEG stays in process.
let image = try ImageDecoderRegistry.shared.decode(heic)
print("IsolatedApp: HEIC \(image.image.width)×\(image.image.height) decoded in a helper")
// One helper decoded it (a spare may have started beside it), in the sandbox.
guard (1...2).contains(pool.status.started), pool.status.isSandboxed == true else { fail("expected one sandboxed helper, got \(pool.status)") }
let photo = try ImageDecoderRegistry.shared.decode(jpeg)
print("IsolatedApp: JPEG \(photo.image.width)×\(photo.image.height) decoded in process")

// A truncated HEIC: the isolated decoder's error, never retried in process.
do {
    _ = try ImageDecoderRegistry.shared.decode(heic.prefix(heic.count / 2))
    fail("a truncated HEIC decoded")
} catch let error as ImageCodecError {
    guard error.codec?.contains("isolated") == true, error.attempts.count == 1 else { fail("unexpected error \(error)") }
    print("IsolatedApp: truncated HEIC: \(error)")
}
pool.shutdown()
print("IsolatedApp: OK")
