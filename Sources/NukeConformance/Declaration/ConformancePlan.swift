import Foundation
import NukeCore

/// Everything a plugin's conformance test needs, from one declaration: the codec, its fixtures in
/// `Fixtures/<format>` of the repository, and the public corpus beside it when present.
///
/// A plugin's whole standard conformance suite is then:
///
/// ```swift
/// enum MyConformance {
///     static let plan = ConformancePlan(codec: .myFormat, format: "myformat", testFile: #filePath,
///                                       corpusExtensions: ["myf"])
/// }
///
/// @Suite struct MyConformanceTests {
///     @Test(arguments: MyConformance.plan.cases)
///     func conformance(_ check: ConformanceCase) async {
///         let result = await MyConformance.plan.run(check)
///         #expect(result.passed, "\(result)")
///     }
///
///     @Test(.enabled(if: MyConformance.plan.hasCorpus), arguments: MyConformance.plan.corpusCases)
///     func corpus(_ check: ConformanceCase) async {
///         let result = await MyConformance.plan.run(check)
///         #expect(result.passed, "\(result)")
///     }
/// }
/// ```
///
/// The kit has no test-framework dependency, so the two `#expect`s stay in the plugin's test.
public struct ConformancePlan: Sendable {
    /// The suite the cases run with (its options can be changed before use).
    public var suite: ConformanceSuite
    /// The fixture manifest; empty (and ``manifestError`` set) when it could not be read.
    public var manifest: FixtureManifest { suite.manifest }
    /// Why the manifest could not be read, if it could not.
    public var manifestError: String?
    /// The corpus folder (`../shared/corpora/<format>` beside the repository).
    public var corpus: URL
    /// The corpus files, with what is expected of each.
    public var corpusFiles: [Fixture]

    /// - Parameters:
    ///   - codec: The codec under test.
    ///   - format: The folder name under `Fixtures/` and `../shared/corpora/`, such as `"png"`.
    ///   - testFile: The test's `#filePath`; the repository root is found above it (the folder
    ///     holding `Package.swift`).
    ///   - corpusExtensions: File extensions of the corpus files to run (lowercase).
    ///   - options: The suite's options.
    ///   - expectation: What a corpus file must do; the default only asks that it decode or
    ///     throw `ImageCodecError` (``Fixture/Kind/unknown``).
    public init(
        codec: ImageCodec,
        format: String,
        testFile: String,
        corpusExtensions: [String],
        options: ConformanceSuite.Options = ConformanceSuite.Options(),
        expectation: (URL) -> Fixture = { Fixture(url: $0, kind: .unknown) }
    ) {
        let root = Self.repositoryRoot(above: URL(fileURLWithPath: testFile))
        let fixtures = root.appendingPathComponent("Fixtures/\(format)")
        var manifest = FixtureManifest(format: format, directory: fixtures, fixtures: [])
        do {
            manifest = try FixtureManifest.load(from: fixtures)
        } catch {
            manifestError = "cannot read \(fixtures.path)/manifest.json: \(error)"
        }
        suite = ConformanceSuite(codec: codec, manifest: manifest, options: options)
        corpus = root.deletingLastPathComponent().appendingPathComponent("shared/corpora/\(format)")
        let extensions = Set(corpusExtensions.map { $0.lowercased() })
        let files = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }
            .filter { extensions.contains($0.pathExtension.lowercased()) }
            .sorted { $0.path < $1.path } ?? []
        corpusFiles = files.map(expectation)
    }

    /// A plan over a manifest loaded elsewhere (fixtures made at run time, say).
    public init(codec: ImageCodec, manifest: FixtureManifest, corpusFiles: [Fixture] = [],
                options: ConformanceSuite.Options = ConformanceSuite.Options()) {
        suite = ConformanceSuite(codec: codec, manifest: manifest, options: options)
        corpus = manifest.directory
        self.corpusFiles = corpusFiles
    }

    /// `true` when the corpus folder exists (tests over it skip cleanly otherwise).
    public var hasCorpus: Bool { FileManager.default.fileExists(atPath: corpus.path) }

    /// The standard cases over the fixtures: sniffing and progressive feeding for every fixture;
    /// reference decode, truncation, corruption, round trip (when the codec encodes), limits,
    /// animation (lazy frames against eager ones; still images are skipped), decode to size,
    /// cancellation and the header hook for the valid ones; invalid input and final verdicts for the invalid
    /// ones; and concurrency once.
    public var cases: [ConformanceCase] {
        let all = manifest.fixtures
        let valid = manifest.valid
        var cases: [ConformanceCase] = []
        cases += all.map { ConformanceCase(check: .sniffing, fixture: $0, minimumCases: 1) }
        cases += valid.map { ConformanceCase(check: .referenceDecode, fixture: $0, minimumCases: 1) }
        cases += manifest.invalid.map { ConformanceCase(check: .invalidInput, fixture: $0, minimumCases: 1) }
        cases += valid.map { ConformanceCase(check: .truncation, fixture: $0, minimumCases: 1) }
        cases += valid.map { ConformanceCase(check: .corruption, fixture: $0, minimumCases: 1) }
        cases += all.map { ConformanceCase(check: .progressive, fixture: $0) }
        if suite.codec.makeEncoder != nil {
            cases += valid.map { ConformanceCase(check: .roundTrip, fixture: $0, minimumCases: 1) }
        }
        cases += valid.map { ConformanceCase(check: .limits, fixture: $0) }
        cases += valid.map { ConformanceCase(check: .animation, fixture: $0) }
        cases += valid.map { ConformanceCase(check: .decodeToSize, fixture: $0) }
        cases += valid.map { ConformanceCase(check: .cancellation, fixture: $0, minimumCases: 1) }
        cases += valid.map { ConformanceCase(check: .header, fixture: $0) }
        cases += manifest.invalid.map { ConformanceCase(check: .finalVerdicts, fixture: $0) }
        cases.append(ConformanceCase(check: .concurrency, fixture: nil, minimumCases: 1))
        return cases
    }

    /// The cases over the corpus: every file decodes or throws `ImageCodecError`, and the ones
    /// expected to be invalid throw the expected code.
    public var corpusCases: [ConformanceCase] {
        corpusFiles.flatMap { file -> [ConformanceCase] in
            var cases = [ConformanceCase(check: .robustness, fixture: file, minimumCases: 1)]
            if file.kind == .invalid { cases.append(ConformanceCase(check: .invalidInput, fixture: file, minimumCases: 1)) }
            return cases
        }
    }

    /// Runs one case. A manifest that could not be read, or a check that ran fewer cases than
    /// the case's minimum, is a failure.
    public func run(_ check: ConformanceCase) async -> ConformanceResult {
        var result: ConformanceResult
        switch (check.check, check.fixture) {
        case (.concurrency, _): result = await suite.checkConcurrency()
        case (let kind, let fixture?): result = await suite.run(kind, on: fixture)
        case (_, nil): result = ConformanceResult(check: check.check)
        }
        if let manifestError {
            result.fail(nil, manifestError)
        }
        if result.caseCount < check.minimumCases {
            result.fail(check.fixture, "ran \(result.caseCount) case(s), fewer than the \(check.minimumCases) required")
        }
        return result
    }

    /// The folder holding `Package.swift` at or above `file`, or `file`'s folder when none does.
    static func repositoryRoot(above file: URL) -> URL {
        var folder = file.deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) { return folder }
            folder = folder.deletingLastPathComponent()
        }
        return file.deletingLastPathComponent()
    }
}
