import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `nuke fetch`: runs NukePipeline's `nuke-fetch` with the same arguments, so that `nuke` itself
/// never links AsyncHTTPClient and its NIO stack (NukePipeline is a package of its own).
/// The program is `$NUKE_FETCH`, else `nuke-fetch` beside this program, else on `PATH`.
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch URLs through NukePipeline to a folder (runs nuke-fetch).",
        discussion: """
        nuke fetch URL... --out DIR [--size 256] [--to webp] [--cache DIR] [--jobs N] [--from FILE]
        `nuke fetch --help` (with nuke-fetch installed) lists every option. `scripts/install.sh`
        builds nuke and nuke-fetch and installs them side by side (in ~/.local/bin); or build
        nuke-fetch with `swift build -c release --package-path NukePipeline --product nuke-fetch`
        and put it beside nuke, on PATH, or in NUKE_FETCH.
        """
    )

    @Argument(parsing: .captureForPassthrough, help: "Passed to nuke-fetch.")
    var arguments: [String] = []

    func run() throws {
        guard let program = Self.locate() else {
            Terminal.errorRaw("nuke fetch: nuke-fetch was not found (NUKE_FETCH, beside nuke, or on PATH); scripts/install.sh "
                + "installs nuke and nuke-fetch side by side, or build it with "
                + "`swift build -c release --package-path NukePipeline --product nuke-fetch`\n")
            throw ExitStatus.io
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        execv(program, argv)
        Terminal.errorRaw("nuke fetch: could not run \(program): \(String(cString: strerror(errno)))\n")
        throw ExitStatus.io
    }

    static func locate() -> String? {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit = environment["NUKE_FETCH"], !explicit.isEmpty { candidates.append(explicit) }
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((me as NSString).deletingLastPathComponent + "/nuke-fetch")
        }
        for folder in (environment["PATH"] ?? "").split(separator: ":") where !folder.isEmpty {
            candidates.append(folder + "/nuke-fetch")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
