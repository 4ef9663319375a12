import Synchronization

/// What `/ready` answers: ready when the helpers are warm, no lane is overloaded and the
/// service is not draining.
final class Readiness: Sendable {
    private let draining = Atomic<Bool>(false)
    let lanes: [Admission]
    /// Waiting requests in a lane from which the replica says it is overloaded.
    let overloadedAt: Int
    /// Whether the sandboxed helpers are warm (always true without a pool).
    let helpersWarm: @Sendable () -> Bool

    init(lanes: [Admission], overloadedAt: Int, helpersWarm: @escaping @Sendable () -> Bool) {
        self.lanes = lanes
        self.overloadedAt = max(1, overloadedAt)
        self.helpersWarm = helpersWarm
    }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    func startDraining() { draining.store(true, ordering: .releasing) }

    /// `nil` when ready, otherwise why not.
    var notReadyReason: String? {
        if isDraining { return "draining" }
        if !helpersWarm() { return "helpers starting" }
        for lane in lanes where lane.load.waiting >= overloadedAt {
            return "overloaded: \(lane.load.waiting) waiting in the \(lane.name) lane"
        }
        return nil
    }
}
