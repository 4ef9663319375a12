/// The results of ``ConformanceSuite/runAll(_:)``: one merged ``ConformanceResult`` per check.
///
/// ```swift
/// let report = await suite.runAll()
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// The codec that was checked, such as `"NukeJPEG [JPEG] decode,encode libjpeg-turbo 2.1.5"`.
    public var codec: String
    /// One result per check, in the order they ran.
    public var results: [ConformanceResult]

    public init(codec: String, results: [ConformanceResult]) {
        self.codec = codec
        self.results = results
    }

    /// Every failure of every check.
    public var failures: [ConformanceFailure] { results.flatMap(\.failures) }

    /// `true` when no check found a defect.
    public var passed: Bool { results.allSatisfy(\.passed) }

    /// The result of one check, if it ran.
    public subscript(check: ConformanceCheck) -> ConformanceResult? {
        results.first { $0.check == check }
    }

    /// The number of failures per check.
    public var failureCounts: [ConformanceCheck: Int] {
        Dictionary(results.map { ($0.check, $0.failures.count) }, uniquingKeysWith: +)
    }

    public var description: String {
        let total = failures.count
        var text = "Conformance of \(codec): \(total == 0 ? "passed" : "\(total) failure\(total == 1 ? "" : "s")")"
        for result in results {
            text += "\n" + result.description.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "  " + $0 }.joined(separator: "\n")
        }
        return text
    }
}
