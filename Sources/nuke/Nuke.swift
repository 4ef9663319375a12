import ArgumentParser
import NukeCore
import NukeIsolation

/// The `nuke` command: inspect, convert and progressively decode images with the codecs
/// linked into NukeCodecs.
@main
struct Nuke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nuke",
        abstract: "Decode, inspect and convert images with NukeCodecs.",
        discussion: """
        Decoding goes through the codec registry: every codec plugin linked into this tool \
        (see `nuke formats`) is available, with its C library's own error messages.

        EXIT CODES:
          0   success
          1   a file could not be decoded or encoded (in a batch: at least one file failed)
          3   no codec is registered for the format (every failure was of this kind)
          4   a file could not be read or written
          64  usage error (swift-argument-parser's default)
        """,
        subcommands: [FormatsCommand.self, InfoCommand.self, ConvertCommand.self, ProgressiveCommand.self, FramesCommand.self, FetchCommand.self]
    )

    /// `nuke` is its own isolation helper: started with `--nuke-isolation-helper`, it serves
    /// decodes for the `nuke` that started it and never parses a command line.
    ///
    /// Helpers started for isolated decodes are ended and reaped before `nuke` exits, so none
    /// outlives it and the operating system counts their CPU time and memory as `nuke`'s own
    /// (what `time` or `wait4` report for the command).
    static func main() async {
        IsolatedDecoding.runHelperIfRequested()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            await CLIIsolation.pool.shutdown()
        } catch {
            await CLIIsolation.pool.shutdown()
            exit(withError: error)
        }
    }
}
