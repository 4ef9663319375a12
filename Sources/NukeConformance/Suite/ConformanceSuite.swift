import Foundation
import NukeCore

/// Checks that a codec plugin decodes its format the way NukeCodecs expects: against
/// reference decodes, on truncated and hostile input, fed progressively, under limits and
/// in parallel.
///
/// Give it the codec under test and a ``FixtureManifest``; every check returns a
/// ``ConformanceResult`` instead of asserting, so it works from Swift Testing, XCTest or a
/// command-line tool alike.
///
/// ```swift
/// import NukeConformance
/// import Testing
///
/// @Test func conformance() async throws {
///     let manifest = try FixtureManifest.load(from: fixturesURL)
///     let suite = ConformanceSuite(codec: .bmp, manifest: manifest)
///     let report = await suite.runAll()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
///
/// Or one check per fixture, so that a failure names its file:
///
/// ```swift
/// @Test(arguments: manifest.valid)
/// func truncation(_ fixture: Fixture) {
///     let result = suite.checkTruncation(fixture)
///     #expect(result.failures.isEmpty, "\(result)")
/// }
/// ```
///
/// A decoder that crashes on a fixture crashes the test process: that is the failure
/// signal, and the last fixture the test framework started names the file.
///
/// Add the product to a test target with `.product(name: "NukeConformance", package: "NukeCodecs")`.
public struct ConformanceSuite: Sendable {
    /// The codec under test.
    public var codec: ImageCodec
    /// The fixtures.
    public var manifest: FixtureManifest
    /// What to check and how hard.
    public var options: Options

    /// Creates a suite.
    ///
    /// - Parameters:
    ///   - codec: The codec under test: its `ImageCodecInfo.type`, decoder and encoder.
    ///   - manifest: The fixtures to check it with.
    ///   - options: Limits, seed and effort caps.
    public init(codec: ImageCodec, manifest: FixtureManifest, options: Options = Options()) {
        self.codec = codec
        self.manifest = manifest
        self.options = options
    }

    /// Runs the given checks on every fixture they apply to.
    ///
    /// - Parameter checks: The checks; default: all of them.
    /// - Returns: One merged result per check.
    public func runAll(_ checks: [ConformanceCheck] = ConformanceCheck.allCases) async -> ConformanceReport {
        var results: [ConformanceResult] = []
        for check in checks {
            results.append(await run(check))
        }
        return ConformanceReport(codec: codec.info.description, results: results)
    }

    /// Runs one check on every fixture it applies to, merged into one result.
    public func run(_ check: ConformanceCheck) async -> ConformanceResult {
        if check == .concurrency { return await checkConcurrency() }
        var merged = ConformanceResult(check: check)
        for fixture in manifest.fixtures where applies(check, to: fixture) {
            merged.merge(await run(check, on: fixture))
        }
        return merged
    }

    /// Runs one check on one fixture.
    ///
    /// The decodes run on `BlockingWorkQueue.shared`'s threads while the calling task
    /// suspends: a check decodes every prefix of a file, and it must not hold one of the
    /// cooperative pool's few threads for that long.
    public func run(_ check: ConformanceCheck, on fixture: Fixture) async -> ConformanceResult {
        if check == .concurrency { return await checkConcurrency([fixture]) }
        return await BlockingWorkQueue.shared.run { [self] in runBlocking(check, on: fixture) }
    }

    /// Runs one check other than ``ConformanceCheck/concurrency`` on one fixture, on the
    /// calling thread.
    func runBlocking(_ check: ConformanceCheck, on fixture: Fixture) -> ConformanceResult {
        switch check {
        case .sniffing: checkSniffing(fixture)
        case .referenceDecode: checkReferenceDecode(fixture)
        case .invalidInput: checkInvalidInput(fixture)
        case .truncation: checkTruncation(fixture)
        case .corruption: checkCorruption(fixture)
        case .progressive: checkProgressive(fixture)
        case .roundTrip: checkRoundTrip(fixture)
        case .limits: checkLimits(fixture)
        case .concurrency: preconditionFailure("the concurrency check runs its own threads")
        case .robustness: checkRobustness(fixture)
        case .animation: checkAnimation(fixture)
        case .decodeToSize: checkDecodeToSize(fixture)
        case .cancellation: checkCancellation(fixture)
        case .finalVerdicts: checkFinalVerdicts(fixture)
        case .header: checkHeader(fixture)
        }
    }

    /// `true` when `check` has something to verify on `fixture`.
    public func applies(_ check: ConformanceCheck, to fixture: Fixture) -> Bool {
        switch check {
        case .sniffing, .progressive, .concurrency, .robustness: true
        case .referenceDecode, .truncation, .corruption, .roundTrip, .limits, .animation, .decodeToSize, .cancellation, .header:
            fixture.kind == .valid
        case .invalidInput, .finalVerdicts: fixture.kind == .invalid
        }
    }
}
