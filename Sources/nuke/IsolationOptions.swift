import ArgumentParser
import NukeCore
import NukeIsolation
import Foundation
import Synchronization

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

    /// Installs the policy on the shared registry, once per process. With `inputs` (the files
    /// the run decodes), helpers prepare only their formats (``IsolationConfiguration/warmUpFormats``):
    /// converting an AVIF, a helper need not open librsvg or libavcodec.
    func apply(inputs: [String]? = nil) {
        CLIIsolation.install(policy, formats: inputs.flatMap(CLIIsolation.formats(of:)))
    }
}

/// The CLI's helper pool: `nuke` itself started in helper mode.
///
/// A run decodes one file, so one helper: a zygote would only add a process and a fork to the
/// one start there is. Long-running hosts keep the default (helpers forked from a zygote).
enum CLIIsolation {
    /// The formats the run's helpers prepare (`nil`: every format), set before `pool` is first used.
    private static let warmUpFormats = Mutex<Set<ImageType>?>(nil)

    static let pool = HelperPool(configuration: IsolationConfiguration(startsHelpersFromZygote: false,
                                                                       warmUpFormats: warmUpFormats.withLock { $0 }))

    static func install(_ policy: IsolationPolicy, formats: Set<ImageType>? = nil) {
        warmUpFormats.withLock { $0 = formats }
        IsolatedDecoding.install(on: .shared, policy: policy, pool: pool)
    }

    /// The formats of `paths`, sniffed from their first bytes, or `nil` when one is not a file
    /// whose format is known (a directory, a missing file: every format is prepared then).
    static func formats(of paths: [String]) -> Set<ImageType>? {
        var formats: Set<ImageType> = []
        for path in paths {
            guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? handle.close() }
            guard let head = try? handle.read(upToCount: 64), let type = ImageType(head) else { return nil }
            formats.insert(type)
        }
        return formats.isEmpty ? nil : formats
    }
}
