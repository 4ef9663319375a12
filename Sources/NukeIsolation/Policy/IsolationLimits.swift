/// What one isolated decode may use. Beyond any of them the helper is killed and the decode
/// ends in an ``NukeCore/ImageCodecError``; the host and its other decodes carry on.
public struct IsolationLimits: Sendable, Hashable {
    /// Wall time for each answer from the helper (a one-shot decode: the whole decode; a
    /// progressive session: each step). Beyond it: `.timedOut`. Default 30 s.
    public var wallTime: Duration
    /// CPU time for the decode (`RLIMIT_CPU`; the kernel sends SIGXCPU). Beyond it:
    /// `.limitExceeded` naming the CPU limit. Default 20 s; `nil` for none.
    public var cpuTime: Duration?
    /// The helper's address space during the decode (`RLIMIT_AS`), in bytes: allocations beyond it
    /// fail, which ends the decode with the decoder's own out-of-memory error or a crash reported
    /// as hitting this limit. Default 2 GiB; `nil` for none.
    public var addressSpace: Int?

    public init(wallTime: Duration = .seconds(30), cpuTime: Duration? = .seconds(20), addressSpace: Int? = 2 << 30) {
        self.wallTime = wallTime
        self.cpuTime = cpuTime
        self.addressSpace = addressSpace
    }
}
