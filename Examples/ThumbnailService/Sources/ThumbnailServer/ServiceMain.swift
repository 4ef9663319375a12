import Foundation
import Logging

/// The executable's entry: configuration from flags and the environment, validated; then the
/// server until SIGTERM.
public enum ServiceMain {
    public static func run() async {
        let arguments = CommandLine.arguments
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return
        }
        let settings: ServiceSettings
        do {
            settings = try ServiceSettings.load(arguments: arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("ThumbnailService: \(error)\n(--help lists the settings)\n".utf8))
            exit(64)
        }
        HeapTuning.keepFreedBlocks(upToMegabytes: settings.heapKeepMegabytes)
        // One arena per core, so that the end of a burst gives the heap back (HeapTuning), unless
        // the operator chose a number (glibc's MALLOC_ARENA_MAX).
        if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil {
            HeapTuning.limitArenas(to: max(2, ProcessInfo.processInfo.activeProcessorCount))
        }
        let format = settings.logFormat
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = format == "json" ? JSONLogHandler(label: label) : StreamLogHandler.standardOutput(label: label)
            handler.logLevel = .info
            return handler
        }
        let logger = Logger(label: "ThumbnailService")
        do {
            try await ThumbnailServer(settings: settings, logger: logger).run()
        } catch {
            logger.critical("stopped", metadata: ["error": .string(LogEscaping.escaped("\(error)"))])
            exit(1)
        }
    }

    static var usage: String {
        var lines = ["ThumbnailService — every setting is a flag or an environment variable (the flag wins):", ""]
        for key in ServiceSettings.keys {
            lines.append("  \(ServiceSettings.flagName(key).padding(toLength: 30, withPad: " ", startingAt: 0)) \(ServiceSettings.environmentName(key))")
        }
        lines.append("")
        lines.append("See README.md for what each means and its default.")
        return lines.joined(separator: "\n")
    }
}
