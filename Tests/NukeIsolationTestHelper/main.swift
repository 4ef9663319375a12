import CNukeIsolationTestSupport
import Foundation
import NukeCore
import NukeGIF
import NukeHEIF
import NukeIsolation
import NukeJPEG
import NukePNG
import NukeSVG

// The helper NukeIsolation's tests start: the JPEG and PNG codecs, plus a decoder for the
// test format ("NUKETEST" + one command byte) that misbehaves on command.

let testType = ImageType(rawValue: "org.nukecodecs.test")
ImageType.register(testType, name: "NukeTest", filenameExtensions: ["nuketest"]) { data in
    data.starts(with: Array("NUKETEST".utf8))
}

struct Misbehaving: Error, CustomStringConvertible {
    var description: String
}

final class MisbehavingDecoder: ImageDecoderRegistering, Sendable {
    init() {}
    init?(data: Data, context: ImageDecodingContext) {
        guard data.starts(with: Array("NUKETEST".utf8)) else { return nil }
    }
    init?(partiallyDownloadedData data: Data, context: ImageDecodingContext) {
        guard data.starts(with: Array("NUKETEST".utf8)) else { return nil }
    }

    func decode(_ data: Data) throws -> ImageContainer {
        let command = data.count > 8 ? Character(UnicodeScalar(data[data.startIndex + 8])) : "I"
        switch command {
        case "S": nuketest_segfault()
        case "A": nuketest_abort()
        case "L": nuketest_spin()
        case "M":
            let megabytes = nuketest_allocate_without_bound()
            throw Misbehaving(description: "out of memory after \(megabytes) MiB")
        case "F":
            let result = nuketest_open("/etc/hostname")
            if result < 0 { throw Misbehaving(description: "open(/etc/hostname) failed: \(String(cString: strerror(-result)))") }
        case "N":
            let result = nuketest_socket()
            if result < 0 { throw Misbehaving(description: "socket() failed: \(String(cString: strerror(-result)))") }
        case "K":
            let result = nuketest_fork()
            if result < 0 { throw Misbehaving(description: "fork() failed: \(String(cString: strerror(-result)))") }
        case "W":
            Thread.sleep(forTimeInterval: 3)
        case "H":
            Thread.sleep(forTimeInterval: 120)
        default:
            break
        }
        // The image: 3×2 RGBA whose first byte is the command.
        var bytes = [UInt8](repeating: 7, count: 24)
        bytes[0] = data.count > 8 ? data[data.startIndex + 8] : 0
        return ImageContainer(image: Image(bitmap: Bitmap(width: 3, height: 2, pixelFormat: .rgba8, bytes: bytes)), type: testType)
    }
}

ImageDecoderRegistry.shared.register(MisbehavingDecoder.self, for: testType, name: "MisbehavingDecoder")
IsolatedDecoding.runHelperIfRequested()

// Host mode, for the test that a helper does not outlive its host: start a decode that hangs in a
// helper (this program), print the helper's pid, then die without cleaning up.
if CommandLine.arguments.contains("--host-then-die") {
    let pool = HelperPool(configuration: IsolationConfiguration(limits: IsolationLimits(wallTime: .seconds(300), cpuTime: nil), maximumHelpers: 1))
    Thread.detachNewThread { _ = try? IsolatedDecoding.decode(Data("NUKETESTH".utf8), pool: pool) }
    while pool.status.busyPIDs.isEmpty { usleep(10_000) }
    usleep(200_000)
    let line = "\(pool.status.busyPIDs[0])\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
    _exit(0)
}
print("NukeIsolationTestHelper: start me with \(IsolationHelperExecutable.helperModeFlag)")
