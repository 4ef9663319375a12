import Foundation
import NukeConformance
import Testing

/// Runs the built `nuke` executable, as swift-argument-parser's example tests do.
enum NukeBinary {
    /// The repository root, three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let corpora = root.deletingLastPathComponent().appendingPathComponent("shared/corpora")
    static let corporaExist = FileManager.default.fileExists(atPath: corpora.path)

    /// The products directory: where the test bundle is, and `nuke` beside it.
    static let url: URL? = {
        var candidates: [URL] = []
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("nuke"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("nuke"))
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("nuke"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs `nuke` with `arguments` and returns its exit status and output.
    static func run(_ arguments: String...) throws -> Output {
        try run(arguments)
    }

    /// Runs `nuke` with `arguments`, its environment extended by `environment`.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        guard let url else { throw MissingBinary() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        try Data().write(to: out)
        try Data().write(to: err)
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = root
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self)
        )
    }

    /// Parses stdout as JSON.
    static func json(_ output: Output) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(output.stdout.utf8))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("nuke-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    struct MissingBinary: Error, CustomStringConvertible {
        var description: String { "the nuke executable was not found beside \(Bundle.main.bundleURL.path)" }
    }

    /// The entries of Fixtures/<format>/manifest.json, read by the conformance kit; empty when
    /// the manifest cannot be read (the parameterised tests then have no cases).
    static func fixtures(_ format: String) -> [Fixture] {
        (try? FixtureManifest.load(from: root.appendingPathComponent("Fixtures/\(format)")))?.fixtures ?? []
    }
}
