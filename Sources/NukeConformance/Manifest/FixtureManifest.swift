import Foundation

/// The fixtures of one format: a folder of input files, their reference decodes and a
/// `manifest.json` that says what each file is and what a decoder must make of it.
///
/// ```json
/// {
///   "format": "jpeg",
///   "fixtures": [
///     { "file": "baseline.jpg", "kind": "valid", "reference": "baseline.pam",
///       "tolerance": 0, "width": 37, "height": 23, "orientation": 1 },
///     { "file": "truncated.jpg", "kind": "invalid", "expected_error": "incomplete" }
///   ]
/// }
/// ```
///
/// Keys are snake_case; every key but `file` and `kind` may be omitted or `null`. See
/// ``Fixture`` for what each one means. Load a manifest with ``load(from:)``, or build one
/// in code with ``init(format:directory:fixtures:)``.
public struct FixtureManifest: Sendable, Hashable {
    /// The format the fixtures are in, as the manifest names it (such as `"jpeg"`).
    public var format: String
    /// The folder the fixtures' file names are relative to.
    public var directory: URL
    /// Every fixture, in manifest order.
    public var fixtures: [Fixture]

    /// Creates a manifest in code.
    ///
    /// - Parameters:
    ///   - format: The format's name, for messages.
    ///   - directory: The folder that relative file names in `fixtures` are resolved against.
    ///   - fixtures: The fixtures; each one's ``Fixture/directory`` is set to `directory`.
    public init(format: String, directory: URL, fixtures: [Fixture]) {
        self.format = format
        self.directory = directory
        self.fixtures = fixtures.map { fixture in
            var fixture = fixture
            fixture.directory = directory
            return fixture
        }
    }

    /// Reads `manifest.json` from a fixture folder.
    ///
    /// ```swift
    /// let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()   // Tests/MyPluginTests
    ///     .deletingLastPathComponent().deletingLastPathComponent()             // the package
    /// let manifest = try FixtureManifest.load(from: root.appending(path: "Fixtures/bmp"))
    /// ```
    ///
    /// - Parameter directory: The folder holding `manifest.json` and the fixture files.
    /// - Returns: The manifest, with every fixture's files resolved against `directory`.
    /// - Throws: The file system's error when the manifest cannot be read, or a
    ///   `DecodingError` when it does not follow the schema.
    public static func load(from directory: URL) throws -> FixtureManifest {
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        let file = try JSONDecoder().decode(File.self, from: data)
        return FixtureManifest(format: file.format, directory: directory, fixtures: file.fixtures)
    }

    /// The fixtures a decoder must decode.
    public var valid: [Fixture] { fixtures.filter { $0.kind == .valid } }

    /// The fixtures a decoder must reject.
    public var invalid: [Fixture] { fixtures.filter { $0.kind == .invalid } }

    /// The fixture with the given file name, if any.
    public subscript(file: String) -> Fixture? {
        fixtures.first { $0.file == file }
    }

    private struct File: Decodable {
        var format: String
        var fixtures: [Fixture]
    }
}
