/// A defect a check found: which check, which fixture, what went wrong.
public struct ConformanceFailure: Sendable, Hashable, CustomStringConvertible {
    /// The check that failed.
    public var check: ConformanceCheck
    /// The fixture's file name, or `nil` for a failure not tied to one fixture.
    public var fixture: String?
    /// What went wrong, with the numbers needed to reproduce it.
    public var message: String

    public init(check: ConformanceCheck, fixture: String?, message: String) {
        self.check = check
        self.fixture = fixture
        self.message = message
    }

    public var description: String {
        "[\(check)] \(fixture.map { "\($0): " } ?? "")\(message)"
    }
}
