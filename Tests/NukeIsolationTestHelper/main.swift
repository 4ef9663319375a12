import CNukeIsolationTestSupport
import Foundation
import NukeCore
import NukeGIF
import NukeHEIF
@_spi(Testing) import NukeIsolation
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
        case "P":
            // "NUKETESTP" + attack name + ":" + the host's pid: one attack, reported.
            let text = String(decoding: data.dropFirst(9), as: UTF8.self)
            let parts = text.split(separator: ":")
            let name = String(parts.first ?? "")
            let host = parts.count > 1 ? Int32(parts[1]) ?? 0 : 0
            let result = nuketest_attack(name, host)
            if result >= 0 { throw Misbehaving(description: "probe \(name): ALLOWED (\(result))") }
            throw Misbehaving(description: "probe \(name): refused (\(String(cString: strerror(Int32(-result)))))")
        case "H":
            Thread.sleep(forTimeInterval: 120)
        case "Z":
            // Stops the whole helper, its parent-watcher thread included: only the kernel can
            // end it now (nobody sends it SIGCONT).
            kill(getpid(), SIGSTOP)
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
if let index = CommandLine.arguments.firstIndex(of: "--fake-helper"), index + 1 < CommandLine.arguments.count {
    FakeHelper.run(scenario: CommandLine.arguments[index + 1])
}
IsolatedDecoding.runHelperIfRequested()

// Probe host mode: every attack of `SandboxProbe.attacks` in a helper of its own, one line each
// ("NAME<TAB>CODE<TAB>MESSAGE"), as the user running this program. `--no-landlock`: the fallback.
if CommandLine.arguments.contains("--probe-host") {
    var configuration = IsolationConfiguration(limits: IsolationLimits(wallTime: .seconds(20)), maximumHelpers: 2)
    configuration.usesLandlock = !CommandLine.arguments.contains("--no-landlock")
    // The probes' reports are the helper's own text: shown here, never by default.
    configuration.forwardsHelperText = true
    configuration.helperTextLog = .discarded
    let pool = HelperPool(configuration: configuration)
    // A file and a pipe this process holds open without close-on-exec, as a CLI holds its input
    // and a service its log: no helper may see them.
    let held = open("/etc/hostname", O_RDONLY)
    var pipe: [Int32] = [0, 0]
    _ = Glibc.pipe(&pipe)
    for name in CommandLine.arguments.drop(while: { $0 != "--attacks" }).dropFirst() {
        let line: String
        do {
            _ = try IsolatedDecoding.decode(Data("NUKETESTP\(name):\(getpid())".utf8), pool: pool)
            line = "\(name)\tnone\tdecoded"
        } catch let error as ImageCodecError {
            line = "\(name)\t\(error.code.rawValue)\t\(error.message.replacingOccurrences(of: "\n", with: " "))"
        } catch {
            line = "\(name)\terror\t\(error)"
        }
        print(line)
    }
    print("sandbox\t\(pool.status.sandbox?.summary ?? "none")")
    pool.shutdown()
    close(held)
    close(pipe[0])
    close(pipe[1])
    exit(0)
}

// Host mode, for the test that a helper does not outlive its host: start a decode that hangs in a
// helper (this program), print the helper's pid, then die without cleaning up.
if CommandLine.arguments.contains("--host-then-die") {
    let pool = HelperPool(configuration: IsolationConfiguration(limits: IsolationLimits(wallTime: .seconds(300), cpuTime: nil), maximumHelpers: 1))
    // The command after the flag: "H" hangs in the decode, "Z" stops the helper (SIGSTOP).
    let flag = CommandLine.arguments.firstIndex(of: "--host-then-die")!
    let command = flag + 1 < CommandLine.arguments.count ? CommandLine.arguments[flag + 1] : "H"
    Thread.detachNewThread { _ = try? IsolatedDecoding.decode(Data("NUKETEST\(command)".utf8), pool: pool) }
    while pool.status.busyPIDs.isEmpty { usleep(10_000) }
    usleep(200_000)
    let line = "\(pool.status.busyPIDs[0])\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
    _exit(0)
}
print("NukeIsolationTestHelper: start me with \(IsolationHelperExecutable.helperModeFlag)")
