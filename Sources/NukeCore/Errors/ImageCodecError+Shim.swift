extension ImageCodecError.Code {
    /// The code for a failing `nuke_status` returned by a plugin's C shim (`Docs/CShims.md`).
    ///
    /// - Parameter shimStatus: The status's raw value: 3 incomplete, 4 corrupt, 5 unsupported,
    ///   6 limit exceeded, 7 internal failure.
    /// - Returns: `nil` for the statuses that are not failures (0 OK, 1 need more, 2 paused) and
    ///   for values outside the convention.
    public init?(shimStatus: Int32) {
        switch shimStatus {
        case 3: self = .incomplete
        case 4: self = .corrupt
        case 5: self = .unsupported
        case 6: self = .limitExceeded
        case 7: self = .internalFailure
        default: return nil
        }
    }
}
