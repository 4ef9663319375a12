import ArgumentParser
import Foundation
import NukeCore
import NukeIsolation

/// `nuke formats`: the codecs linked into the tool and what each can do.
struct FormatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formats",
        abstract: "List the registered codecs: what each can do and its C library's version."
    )

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let codecs = Self.registeredCodecs()
        let isolation = Self.isolationStatus()
        if json {
            JSONOutput.print([
                "codecs": codecs.map(Self.jsonObject),
                "writers": ["pam", "ppm"],
                "decodeOptions": ImageCodec.linkedDecodingOptions.map { ["name": $0.name, "key": $0.key, "summary": $0.summary] },
                "isolation": [
                    "isolatedByDefault": codecs.filter { IsolationPolicy.knownCrashers.isolates($0.type) }.map(\.type.name),
                    "sandbox": isolation.sandboxed,
                    "sandboxNote": JSONOutput.orNull(isolation.note),
                    "sandboxLayers": isolation.layers,
                    "helperStartMilliseconds": JSONOutput.orNull(isolation.startMilliseconds),
                    "zygoteStartMilliseconds": JSONOutput.orNull(isolation.zygoteMilliseconds),
                ] as [String: Any],
            ] as [String: Any])
            return
        }
        if codecs.isEmpty {
            print("No codecs are registered.")
        } else {
            let yes = { (flag: Bool) in flag ? "yes" : "-" }
            var rows = [["FORMAT", "CODEC", "DECODE", "ENCODE", "PROGRESSIVE", "SCALED", "ANIMATION", "16-BIT", "LIBRARY"]]
            for info in codecs {
                let c = info.capabilities
                rows.append([
                    info.type.name, info.name, yes(c.contains(.decode)), yes(c.contains(.encode)),
                    yes(c.contains(.progressive)), c.contains(.scaledDecode) ? info.nativeReductions?.description ?? "yes" : "-", yes(c.contains(.animation)),
                    yes(c.contains(.highBitDepth)), info.library.isEmpty ? "(Swift)" : info.codecDescription,
                ])
            }
            let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                let cells = row.enumerated().map { $0.offset == row.count - 1 ? $0.element : $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                print(cells.joined(separator: "  "))
            }
        }
        for option in ImageCodec.linkedDecodingOptions {
            print("Decode option `--option \(option.name)=VALUE`: \(option.summary).")
        }
        let isolated = codecs.filter { IsolationPolicy.knownCrashers.isolates($0.type) }.map(\.type.name)
        print("Isolated by default (sandboxed helper processes, one decode each; --isolate for every format, --in-process for none): "
              + (isolated.isEmpty ? "none linked" : isolated.joined(separator: ", ")) + ".")
        print(isolation.sandboxed ? "Sandbox layers active: \(isolation.layers.joined(separator: "; "))." : "Sandbox NOT active (\(isolation.note ?? "unknown")).")
    }

    /// Starts one helper (`nuke` in helper mode) to see whether its sandbox installs here.
    /// The helper's start is the last one (forked from the zygote, when the pool has one); the
    /// zygote's own start comes once, before the first helper.
    static func isolationStatus() -> (sandboxed: Bool, note: String?, layers: [String], startMilliseconds: Int?, zygoteMilliseconds: Int?) {
        do {
            try CLIIsolation.pool.prewarm(1)
        } catch {
            return (false, "the helper did not start: \(error)", [], nil, nil)
        }
        let status = CLIIsolation.pool.status
        let milliseconds = { (duration: Duration) in Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) }
        return (status.isSandboxed ?? false, status.sandboxNote, status.sandbox?.layers ?? [], status.lastStartDuration.map(milliseconds),
                status.zygoteStartDuration.map(milliseconds))
    }

    /// Every codec in the shared decoder and encoder registries, decoders first, without duplicates.
    static func registeredCodecs() -> [ImageCodecInfo] {
        var seen = Set<ImageCodecInfo>()
        return (ImageDecoderRegistry.shared.registeredCodecs + ImageEncoderRegistry.shared.registeredCodecs)
            .filter { seen.insert($0).inserted }
    }

    static func jsonObject(_ info: ImageCodecInfo) -> [String: Any] {
        let c = info.capabilities
        return [
            "name": info.name,
            "format": info.type.name,
            "type": info.type.rawValue,
            "extensions": info.type.filenameExtensions,
            "capabilities": c.names,
            "decode": c.contains(.decode),
            "encode": c.contains(.encode),
            "progressive": c.contains(.progressive),
            "scaledDecode": c.contains(.scaledDecode),
            "nativeReductions": JSONOutput.orNull(info.nativeReductions?.description),
            "animation": c.contains(.animation),
            "highBitDepth": c.contains(.highBitDepth),
            "library": info.library,
            "libraryVersion": info.libraryVersion,
            "priority": info.priority,
        ]
    }
}
