import ArgumentParser
import NukeCore

/// The exit codes `nuke --help` documents.
enum ExitStatus {
    /// A file could not be decoded or encoded; in a batch, at least one file failed.
    static let failure = ExitCode(1)
    /// No codec is registered for the format.
    static let noCodec = ExitCode(3)
    /// A file could not be read or written.
    static let io = ExitCode(4)

    /// The exit code for a set of failures: ``noCodec`` when every one is `.noCodec`,
    /// ``io`` when every one is an I/O error, otherwise ``failure``.
    static func code(for errors: [any Error]) -> ExitCode {
        guard !errors.isEmpty else { return .success }
        if errors.allSatisfy({ ($0 as? ImageCodecError)?.code == .noCodec }) { return noCodec }
        if errors.allSatisfy({ $0 is FileError }) { return io }
        return failure
    }
}

/// A file that could not be read or written.
struct FileError: Error, Sendable, CustomStringConvertible {
    var path: String
    var reason: String

    var description: String { "\(path): \(reason)" }
}
