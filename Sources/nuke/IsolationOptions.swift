import ArgumentParser
import NukeCore
import NukeIsolation

/// `--isolate` / `--in-process`: where `nuke` decodes. By default the formats whose C library is
/// known to crash on hostile files (HEIC, HEIF, AVIF, SVG) are decoded in sandboxed helper
/// processes (`nuke` itself in helper mode), the others in process.
struct IsolationOptions: ParsableArguments {
    @Flag(help: "Decode every format in a sandboxed helper process (default: only HEIC, HEIF, AVIF and SVG).")
    var isolate = false

    @Flag(name: .customLong("in-process"), help: "Decode every format in this process, HEIC, HEIF, AVIF and SVG included.")
    var inProcess = false

    func validate() throws {
        if isolate && inProcess { throw ValidationError("--isolate and --in-process exclude each other") }
    }

    var policy: IsolationPolicy {
        isolate ? .isolated : (inProcess ? .inProcess : .knownCrashers)
    }

    /// Installs the policy on the shared registry, once per process.
    func apply() {
        CLIIsolation.install(policy)
    }
}

/// The CLI's helper pool: `nuke` itself started in helper mode.
///
/// A run decodes one file, so one helper: a zygote would only add a process and a fork to the
/// one start there is. Long-running hosts keep the default (helpers forked from a zygote).
enum CLIIsolation {
    static let pool = HelperPool(configuration: IsolationConfiguration(startsHelpersFromZygote: false))

    static func install(_ policy: IsolationPolicy) {
        IsolatedDecoding.install(on: .shared, policy: policy, pool: pool)
    }
}
