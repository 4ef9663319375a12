import CNukeShim
import NukeCore
import NukePluginKit
import Testing

/// `ImageCodecError.Code(shimStatus:)` (NukePluginKit) and `nuke_status` (CNukeShim, the enum
/// every plugin's C shim returns) stay in step.
@Suite struct ShimStatusTests {
    /// Each C status with the code the kit gives it (`nil`: not a failure).
    static let statuses: [(status: UInt32, code: ImageCodecError.Code?)] = [
        (NUKE_STATUS_OK.rawValue, nil),
        (NUKE_STATUS_NEED_MORE.rawValue, nil),
        (NUKE_STATUS_PAUSED.rawValue, nil),
        (NUKE_STATUS_INCOMPLETE.rawValue, .incomplete),
        (NUKE_STATUS_CORRUPT.rawValue, .corrupt),
        (NUKE_STATUS_UNSUPPORTED.rawValue, .unsupported),
        (NUKE_STATUS_LIMIT.rawValue, .limitExceeded),
        (NUKE_STATUS_INTERNAL.rawValue, .internalFailure),
        (NUKE_STATUS_CANCELLED.rawValue, .cancelled),
    ]

    @Test(arguments: statuses)
    func codeMatchesTheCStatus(_ status: UInt32, _ code: ImageCodecError.Code?) {
        #expect(ImageCodecError.Code(shimStatus: nuke_status(rawValue: status)) == code)
    }

    @Test func everyCStatusIsListed() {
        // The C enum is dense from OK to CANCELLED: one more is outside the convention.
        let values = Self.statuses.map(\.status).sorted()
        #expect(values == Array(0...NUKE_STATUS_CANCELLED.rawValue))
        #expect(ImageCodecError.Code(shimStatus: nuke_status(rawValue: NUKE_STATUS_CANCELLED.rawValue + 1)) == nil)
    }
}
