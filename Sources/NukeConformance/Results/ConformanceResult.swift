/// The outcome of one check on one fixture (or on several, merged).
///
/// Checks never assert: they return results, so that any test framework can assert on
/// ``failures``:
///
/// ```swift
/// let result = suite.checkReferenceDecode(fixture)
/// #expect(result.failures.isEmpty, "\(result)")      // Swift Testing
/// XCTAssertTrue(result.passed, result.description)   // XCTest
/// ```
public struct ConformanceResult: Sendable, CustomStringConvertible {
    /// The check.
    public var check: ConformanceCheck
    /// The fixtures examined, by file name.
    public var fixtures: [String]
    /// How many individual cases were examined (decodes, prefixes, feeding runs...).
    public var caseCount: Int
    /// The defects found.
    public var failures: [ConformanceFailure]
    /// Parts of the check that did not run, and why (a codec without an encoder, a file
    /// over the size cap for byte-by-byte feeding...).
    public var skipped: [String]
    /// The progressive feeding runs (``ConformanceCheck/progressive`` only).
    public var progressiveRuns: [ProgressiveRun]

    public init(check: ConformanceCheck, fixtures: [String] = [], caseCount: Int = 0, failures: [ConformanceFailure] = [], skipped: [String] = [], progressiveRuns: [ProgressiveRun] = []) {
        self.check = check
        self.fixtures = fixtures
        self.caseCount = caseCount
        self.failures = failures
        self.skipped = skipped
        self.progressiveRuns = progressiveRuns
    }

    /// `true` when no defect was found in at least one case, or every part of the check was
    /// skipped for a stated reason. A check that examined nothing and said nothing did not pass.
    public var passed: Bool { failures.isEmpty && (caseCount > 0 || !skipped.isEmpty) }

    /// Adds another result's fixtures, cases, failures, skips and runs to this one.
    public mutating func merge(_ other: ConformanceResult) {
        fixtures += other.fixtures
        caseCount += other.caseCount
        failures += other.failures
        skipped += other.skipped
        progressiveRuns += other.progressiveRuns
    }

    /// Records a failure of this result's check.
    mutating func fail(_ fixture: Fixture?, _ message: String) {
        failures.append(ConformanceFailure(check: check, fixture: fixture?.file, message: message))
    }

    public var description: String {
        let verdict = passed ? "passed" : failures.isEmpty ? "examined nothing" : "\(failures.count) failure\(failures.count == 1 ? "" : "s")"
        var text = "\(check): \(verdict)"
        text += " (\(fixtures.count) fixture\(fixtures.count == 1 ? "" : "s"), \(caseCount) case\(caseCount == 1 ? "" : "s")"
        if !skipped.isEmpty { text += ", \(skipped.count) skipped" }
        text += ")"
        for failure in failures.prefix(50) { text += "\n  ✗ \(failure.fixture.map { "\($0): " } ?? "")\(failure.message)" }
        if failures.count > 50 { text += "\n  … and \(failures.count - 50) more" }
        return text
    }
}
