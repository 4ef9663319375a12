/// One check on one fixture (or, for checks that take none, on the whole manifest): the unit a
/// plugin's conformance test is parameterised over.
///
/// ```swift
/// @Test(arguments: MyConformance.plan.cases)
/// func conformance(_ check: ConformanceCase) async {
///     let result = await MyConformance.plan.run(check)
///     #expect(result.passed, "\(result)")
/// }
/// ```
public struct ConformanceCase: Sendable, CustomStringConvertible {
    /// The check.
    public var check: ConformanceCheck
    /// The fixture it runs on; `nil` for ``ConformanceCheck/concurrency``, which uses them all.
    public var fixture: Fixture?
    /// The fewest cases the check must run: a check that ran nothing could not have failed.
    public var minimumCases: Int

    public init(check: ConformanceCheck, fixture: Fixture?, minimumCases: Int = 0) {
        self.check = check
        self.fixture = fixture
        self.minimumCases = minimumCases
    }

    public var description: String {
        fixture.map { "\(check) \($0.file)" } ?? "\(check)"
    }
}
