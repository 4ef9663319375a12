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
        CLIIsolation.install(policy, formats: inputs.flatMap(CLIIsolation.formats(of:)), batch: inputs.map { $0.count > 1 } ?? true)
    }
}

/// The CLI's helper pool: `nuke` itself started in helper mode.
///
/// Each helper serves one decode. A run of one file starts its helper as a program and keeps no
/// spare (a zygote would only add a process and a fork to the one start there is); a batch forks
/// its helpers from a zygote, one ready ahead of each decode.
enum CLIIsolation {
    /// The formats the run's helpers prepare (`nil`: every format), and whether it is a batch;
    /// set before `pool` is first used.
    private static let settings = Mutex<(formats: Set<ImageType>?, batch: Bool)>((nil, false))

    static let pool: HelperPool = {
        let (formats, batch) = settings.withLock { $0 }
        return HelperPool(configuration: IsolationConfiguration(spareHelpers: batch ? 1 : 0, startsHelpersFromZygote: batch,
                                                                warmUpFormats: formats))
    }()

    static func install(_ policy: IsolationPolicy, formats: Set<ImageType>? = nil, batch: Bool = false) {
        settings.withLock { $0 = (formats, batch) }
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
