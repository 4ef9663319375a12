/// Which layers of the sandbox a helper entered, as it reported them when it said it was ready.
///
/// `nuke formats` prints ``summary``; ``HelperPool/Status/sandbox`` holds the last helper's.
public struct SandboxStatus: Sendable, Hashable {
    /// The seccomp-bpf allow-list is installed on every thread: the system calls a decode needs,
    /// nothing else (Docs/Isolation.md lists them).
    public var systemCallFilter: Bool
    /// Files are confined by Landlock (fonts and locale data read-only); when `false` and the
    /// filter is on, every open fails instead.
    public var filesByLandlock: Bool
    /// The kernel's Landlock ABI version, 0 without Landlock.
    public var landlockABI: Int
    /// Landlock also refuses TCP bind and connect (ABI 4 and later).
    public var networkByLandlock: Bool
    /// Landlock also refuses abstract Unix sockets and signals to processes outside the sandbox
    /// (ABI 6 and later).
    public var scopesByLandlock: Bool
    /// Every capability set is empty.
    public var capabilitiesDropped: Bool
    /// The helper was started as root and took an unprivileged identity.
    public var leftRoot: Bool
    /// The helper's user and group ids inside the sandbox.
    public var userID: UInt32
    public var groupID: UInt32
    /// Why the sandbox is off, when it is.
    public var failure: String?
    /// Folders and files the sandbox leaves readable (fontconfig's font folders and configuration
    /// among them) that the helper's identity cannot read: text in an isolated SVG renders without
    /// those fonts. Give the sandbox's user read access, or configure fonts it can read.
    public var unreadablePaths: [String] = []
    /// The threads the helper may run (RLIMIT_NPROC); 0: not capped (an unprivileged host on a
    /// kernel before 5.14 or without user namespaces).
    public var threadCap = 0
    /// The cap counts this helper's threads alone (a user namespace of its own), not every
    /// helper of the sandbox's identity together.
    public var threadCapPerHelper = false

    /// No sandbox: `reason` says why.
    public static func off(_ reason: String) -> SandboxStatus {
        SandboxStatus(systemCallFilter: false, filesByLandlock: false, landlockABI: 0, networkByLandlock: false, scopesByLandlock: false,
                      capabilitiesDropped: false, leftRoot: false, userID: 0, groupID: 0, failure: reason)
    }

    /// Whether the sandbox is on: the system-call allow-list installed and capabilities dropped.
    public var isActive: Bool { systemCallFilter && capabilitiesDropped && failure == nil }

    /// The active layers, one phrase each.
    public var layers: [String] {
        guard isActive else { return [] }
        var layers = ["seccomp allow-list"]
        if filesByLandlock {
            var landlock = "Landlock ABI \(landlockABI): files (fonts and locale data, read-only)"
            if networkByLandlock { landlock += ", TCP" }
            if scopesByLandlock { landlock += ", signals and abstract sockets" }
            layers.append(landlock)
        } else {
            layers.append(landlockABI > 0 ? "files: none (Landlock not used)" : "files: none (no Landlock in this kernel)")
        }
        layers.append(leftRoot ? "no capabilities, uid \(userID) (started as root)" : "no capabilities, uid \(userID)")
        layers.append("no inherited descriptors")
        if threadCap > 0 {
            layers.append(threadCapPerHelper ? "threads: at most \(threadCap) in this helper (a user namespace of its own)"
                                             : "threads: at most \(threadCap) for uid \(userID)'s helpers together")
        } else {
            layers.append("threads: not capped (no user namespace for an unprivileged host)")
        }
        if !unreadablePaths.isEmpty {
            layers.append("unreadable by uid \(userID), so left out: \(unreadablePaths.joined(separator: ", "))")
        }
        return layers
    }

    /// One line: the layers, or why the sandbox is off.
    public var summary: String {
        isActive ? layers.joined(separator: "; ") : "sandbox NOT active (\(failure ?? "unknown"))"
    }
}
